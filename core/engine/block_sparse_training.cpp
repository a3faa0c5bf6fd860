#include "core/engine/block_sparse_training.h"

#include "kernels/fused/packed_matmul.h"
#include "kernels/sparse/block_sparse_products.h"

namespace moxlab::engine {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The selection kept for the backward pass (the caller's goes out of scope with its forward).
struct HeldSelection : torch::CustomClassHolder {
  explicit HeldSelection(BlockSelection sel) : s(std::move(sel)), order(s.order.to(torch::kCPU).contiguous()) {}
  BlockSelection s;
  torch::Tensor order;  // row r holds token order[r], on the host
  const std::int64_t* rows() const { return order.data_ptr<std::int64_t>(); }
};

const HeldSelection& held(AutogradContext* ctx) {
  return *static_cast<const HeldSelection*>(ctx->saved_data["selection"].toCapsule().get());
}

// What both backwards need: the input (contiguous) where the weight needs a gradient, the weight where the
// input needs one, and the selection.
void keep_for_backward(AutogradContext* ctx, const torch::Tensor& input, const torch::Tensor& input_rows, const torch::Tensor& w,
                       const c10::intrusive_ptr<HeldSelection>& sel) {
  ctx->save_for_backward({w.requires_grad() ? input_rows : torch::Tensor(), input.requires_grad() ? w : torch::Tensor()});
  ctx->saved_data["selection"] = c10::IValue::make_capsule(sel);
}

// A feature-major copy of rows: t [M, f] -> [f, M] (the weight gradient's A).
torch::Tensor features_by_row(const torch::Tensor& t) { return t.t().contiguous(); }

struct BlockSparseInputFunction : torch::autograd::Function<BlockSparseInputFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w, const c10::optional<torch::Tensor>& b,
                               const c10::intrusive_ptr<HeldSelection>& sel) {
    const auto n = w.size(0), d = w.size(1);
    const auto xc = x.contiguous();
    const auto bc = b ? b->contiguous() : torch::Tensor();
    auto y = torch::empty({x.size(0), n}, x.options());
    const auto packed = pack_weight(w.detach().contiguous());
    block_sparse_read_products({xc.data_ptr<float>(), d, sel->rows()}, packed_weight(packed, n), sel->s, row_map(y),
                               bc.defined() ? bc.data_ptr<float>() : nullptr);
    keep_for_backward(ctx, x, xc, w, sel);
    ctx->saved_data["has_bias"] = b.has_value();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& sel = held(ctx);
    const auto dy = grads[0].contiguous();
    const auto n = dy.size(1), M = dy.size(0);
    torch::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) {  // dX = dY W on each row's active blocks, written to the token's row
      const auto& w = saved[1];
      const auto d = w.size(1);
      dx = torch::zeros({M, d}, dy.options());
      const auto b = d / sel.s.blocks;
      block_sparse_write_products(row_map(dy), pack_weight_blocks(w.detach().t().contiguous(), b), b, sel.s, {dx.data_ptr<float>(), d, sel.rows()});
    }
    if (ctx->needs_input_grad(1)) {  // dW^T = x_s^T dY: block i's features over the rows using it
      const auto& x = saved[0];
      const auto d = x.size(1);
      const auto a = features_by_row(x.index_select(0, sel.order));
      auto dwt = torch::empty({d, n}, dy.options());
      block_sparse_weight_grad(row_map(a), d, packed_weight(pack_transposed(dy), n), sel.s, row_map(dwt));
      dw = dwt.t().contiguous();
    }
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) db = dy.sum(0);
    return {dx, dw, db, torch::Tensor()};
  }
};

// u [M, d]: h W_i^T on each row's active blocks i, 0 elsewhere (the output side before its scaling).
struct BlockSparseOutputFunction : torch::autograd::Function<BlockSparseOutputFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& h, const torch::Tensor& w, const c10::intrusive_ptr<HeldSelection>& sel) {
    const auto d = w.size(0);
    const auto hc = h.contiguous();
    auto u = torch::zeros({h.size(0), d}, h.options());
    const auto b = d / sel->s.blocks;
    block_sparse_write_products(row_map(hc), pack_weight_blocks(w.detach().contiguous(), b), b, sel->s, row_map(u));
    keep_for_backward(ctx, h, hc, w, sel);
    return u;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& sel = held(ctx);
    const auto du = grads[0].contiguous();
    const auto M = du.size(0), d = du.size(1);
    torch::Tensor dh, dw;
    if (ctx->needs_input_grad(0)) {  // dh = sum over active blocks i of dU_i W_i
      const auto& w = saved[1];
      const auto k = w.size(1);
      dh = torch::empty({M, k}, du.options());
      block_sparse_read_products(row_map(du), packed_weight(pack_transposed(w.detach()), k), sel.s, row_map(dh));
    }
    if (ctx->needs_input_grad(1)) {  // dW_i = dU_i^T h over the rows using block i
      const auto& h = saved[0];
      const auto k = h.size(1);
      dw = torch::empty({d, k}, du.options());
      block_sparse_weight_grad(row_map(features_by_row(du)), d, packed_weight(pack_transposed(h), k), sel.s, row_map(dw));
    }
    return {dh, dw, torch::Tensor()};
  }
};

}  // namespace

bool block_sparse_training_applies(const BlockSelection& s, const torch::Tensor& w, std::int64_t d) {
  return w.is_cpu() && w.scalar_type() == torch::kFloat && w.dim() == 2 && s.grouped && s.blocks > 0 && d % s.blocks == 0;
}

torch::Tensor block_sparse_input_training(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s, const torch::Tensor& bias) {
  TORCH_CHECK(x.dim() == 2 && x.size(0) == s.tokens && w.dim() == 2 && w.size(1) == x.size(1) && block_sparse_training_applies(s, w, x.size(1)) &&
                  x.is_cpu() && x.scalar_type() == torch::kFloat && (!bias.defined() || bias.numel() == w.size(0)),
              "block-sparse input training: needs x [tokens, d] and w [n, d] float32 on the CPU and the grouped layout");
  return BlockSparseInputFunction::apply(x, w, bias.defined() ? c10::optional<torch::Tensor>(bias) : c10::nullopt,
                                         c10::make_intrusive<HeldSelection>(s));
}

torch::Tensor block_sparse_output_training(const torch::Tensor& h, const torch::Tensor& w, const BlockSelection& s, const torch::Tensor& scale) {
  const auto d = w.size(0), M = h.size(0);
  TORCH_CHECK(h.dim() == 2 && M == s.tokens && w.dim() == 2 && w.size(1) == h.size(1) && block_sparse_training_applies(s, w, d) && h.is_cpu() &&
                  h.scalar_type() == torch::kFloat && scale.sizes() == torch::IntArrayRef({M, s.blocks}),
              "block-sparse output training: needs h [tokens, k], w [d, k] float32 on the CPU, scale [tokens, N] and the grouped layout");
  const auto u = BlockSparseOutputFunction::apply(h, w, c10::make_intrusive<HeldSelection>(s));
  return (u.view({M, s.blocks, d / s.blocks}) * scale.unsqueeze(-1)).view({M, d});
}

}  // namespace moxlab::engine
