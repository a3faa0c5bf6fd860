#include "core/engine/mohd_sparse.h"

#include <cmath>

#include <ATen/Parallel.h>

#include "core/engine/block_sparse_training.h"
#include "core/engine/ops.h"
#include "kernels/fused/attention.h"
#include "kernels/fused/packed_matmul.h"
#include "kernels/sparse/monarch_mix.h"
#include "kernels/sparse/sub_dim_topk.h"

namespace moxlab::engine {

namespace {

// The torch-op forms of the two sides (autograd, or what the packed inference forms do not take): on the
// packed kernels where those take the layer (core/engine/block_sparse_training.h), else LibTorch's.
torch::Tensor input_side(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s, const torch::Tensor& bias = {}) {
  return x.is_cpu() && x.scalar_type() == torch::kFloat && block_sparse_training_applies(s, w, x.size(1))
             ? block_sparse_input_training(x, w, s, bias)
             : block_sparse_input_linear_from_tokens(x, w, s, bias);
}

torch::Tensor output_side(const torch::Tensor& h, const torch::Tensor& w, const BlockSelection& s, const torch::Tensor& scale) {
  return h.is_cpu() && h.scalar_type() == torch::kFloat && block_sparse_training_applies(s, w, w.size(0))
             ? block_sparse_output_training(h, w, s, scale)
             : block_sparse_output_linear(h, w, s, scale);
}

}  // namespace

MohdSparse mohd_sparse(const SubDimRouting& r, const MohdOptions& o) {
  MohdSparse s;
  // Without autograd each thread's share of the tokens grouped on its own, so no row moves between the
  // cores (kernels/fused/attention.cpp). The grouped layout's products on packed weights also win with
  // many sets of routed blocks (docs/decisions/2026-11-26-mohd-short-runs.md). Training keeps one sort:
  // its torch ops split rows their own way.
  const bool training = torch::GradMode::is_enabled();
  const bool packed = !training && r.weights.is_cpu() && r.weights.scalar_type() == torch::kFloat;
  const std::int64_t parts = training ? 1 : at::get_num_threads();
  s.selection = BlockSelection::from_mask(r.active.reshape({-1, o.sub_dims}), o.shared, packed ? "grouped" : "auto", parts);
  s.scale = s.selection.to_rows(r.weights.reshape({-1, o.sub_dims}));
  return s;
}

std::optional<MohdSparse> mohd_sparse_if_wins(const SubDimRouting& r, const MohdOptions& o, const Step& step) {
  if (!step.sparse(true)) return std::nullopt;  // reference forced, or taps recorded
  MohdSparse s = mohd_sparse(r, o);
  if (!step.sparse(s.selection.grouped)) return std::nullopt;
  return s;
}

SubDimRouting SubDimRoutePlan::forward(const torch::Tensor& x) {
  const auto& phi = r_.centroids->weight;
  const int n = r_.sub_dims();
  if (!r_.centroids->bias.defined() && sub_dim_route_fusable(x, phi)) {
    const auto t = sub_dim_route(x, packed_weight(packed_.get({phi}, [&] { return pack_weight(phi.contiguous()); }), n), r_.shared(),
                                 r_.routed(), r_.scaling());
    auto shape = x.sizes().vec();
    shape.back() = n;
    return {t.probs.view(shape), t.gates.view(shape), t.active.view(shape), t.weights.view(shape)};
  }
  const auto logits = r_.centroids(x);
  if (!torch::GradMode::is_enabled() && logits.is_cpu() && logits.scalar_type() == torch::kFloat) {
    const auto t = sub_dim_top_k(logits.reshape({-1, n}), r_.shared(), r_.routed(), r_.scaling());
    return {t.probs.view(logits.sizes()), t.gates.view(logits.sizes()), t.active.view(logits.sizes()), t.weights.view(logits.sizes())};
  }
  return r_.route_logits(logits);
}

torch::Tensor MohdSparseOutput::forward(const torch::Tensor& h, const torch::Tensor& w, const MohdSparse& s) {
  const auto& sel = s.selection;
  const int n = m_.options().sub_dims;
  auto* monarch = m_.monarch ? m_.monarch.get() : nullptr;
  // B1 (w h) block by block = (B1 w) h; inactive blocks stay 0.
  const bool fold = monarch && monarch->can_fold(n);
  const auto wf = fold ? folds_.get({w, monarch->b1}, [&] { return monarch->fold_first_factor(w); }) : w;
  if (sel.grouped && packed_applies(h) && (!monarch || fold)) {
    const auto sources = fold ? std::vector<torch::Tensor>{w, monarch->b1} : std::vector<torch::Tensor>{w};
    const auto packed = packed_.get(sources, [&] { return pack_weight_blocks(wf, wf.size(0) / n); });
    const auto mix = fold ? mix_.get({monarch->b2}, [&] { return monarch_mix_weights(monarch->b2); }) : torch::Tensor();
    return block_sparse_output_to_tokens(h, packed, wf.size(0), sel, s.scale, mix);
  }
  const auto y = output_side(h, wf, sel, s.scale);
  return sel.from_rows(!monarch ? y : fold ? monarch_second_factor(*monarch, y) : engine::monarch(*monarch, y));
}

torch::Tensor MohdSparseOutput::combine(const torch::Tensor& y, const SubDimRouting& r) {
  // ||_i g_i Dim_i(x_s) (Eq. 8) times alpha (Sec. 4.2), then Eq. 9-10.
  auto weighted = y * expand_to_dims(r.weights, m_.block());
  return m_.monarch ? engine::monarch(*m_.monarch, weighted) : weighted;
}

torch::Tensor MohdSparseAttention::forward(const torch::Tensor& x, const MohdSparse& s, Step& step) {
  const auto B = x.size(0), T = x.size(1);
  const auto& rows = s.selection;
  const auto& a = *m_.inner;
  const std::vector<torch::Tensor> qkv_weights{a.wq->weight, a.wk->weight, a.wv->weight};
  const auto bqkv = a.wq->bias.defined() ? fused_.get({a.wq->bias, a.wk->bias, a.wv->bias}, [&] {
    return torch::cat({a.wq->bias, a.wk->bias, a.wv->bias});
  }) : torch::Tensor();
  const std::int64_t hd = a.head_dim(), nq = a.n_heads() * hd, nkv = a.n_kv_heads() * hd;
  const auto x2 = x.reshape({B * T, x.size(2)});
  const auto qkv_rows =
      rows.grouped && packed_applies(x2)
          ? block_sparse_input_packed(x2, packed_weight(packed_.get(qkv_weights, [&] { return pack_weight(torch::cat(qkv_weights)); }), nq + 2 * nkv),
                                      rows, bqkv)
          : input_side(x2, fused_.get(qkv_weights, [&] { return torch::cat(qkv_weights); }), rows, bqkv);
  if (rows.grouped && !step.cache && !torch::GradMode::is_enabled()) {
    // The rows stay in routed-block order from Q/K/V to W_O: RoPE at each row's own position, attention
    // reading and writing through the token -> row map (no un-permutation and re-permutation around it).
    auto part = [&](std::int64_t from, std::int64_t width) { return qkv_rows.narrow(1, from, width).view({B * T, width / hd, hd}); };
    const auto v = part(nq + nkv, nkv);
    if (attention_rows_fusable(part(0, nq), part(nq, nkv), v)) {
      const auto positions = rows.order.remainder(T);
      const auto q = rope_apply_rows(step.rope, part(0, nq), positions), k = rope_apply_rows(step.rope, part(nq, nkv), positions);
      const auto heads = attention_inference_rows(q, k, v, rows.inverse, B, a.causal(), 1.0 / std::sqrt(static_cast<double>(hd)));
      return out_.forward(heads, a.wo->weight, s).view(x.sizes());
    }
  }
  const auto qkv = rows.from_rows(qkv_rows);
  auto part = [&](std::int64_t from, std::int64_t width) { return qkv.narrow(1, from, width).view({B, T, width / hd, hd}); };
  const auto heads = dense_.attend(part(0, nq), part(nq, nkv), part(nq + nkv, nkv), step);
  return out_.forward(rows.to_rows(heads.reshape({B * T, -1})), a.wo->weight, s).view(x.sizes());
}

torch::Tensor MohdSparseFeedForward::forward(const torch::Tensor& x, const MohdSparse& s) {
  const auto& w = *m_.inner;
  const auto hidden = w.w1->weight.size(0);
  const auto x2 = x.reshape({-1, x.size(-1)});
  torch::Tensor act;  // SiLU(gate) * up
  if (s.selection.grouped && packed_applies(x2)) {  // one product per group straight to the activation
    const auto packed = packed_.get({w.w1->weight, w.w3->weight}, [&] { return pack_swiglu_weight(w.w1->weight, w.w3->weight); });
    act = block_sparse_input_packed(x2, packed_weight(packed, hidden, true), s.selection);
  } else {
    const auto w13 = fused_.get({w.w1->weight, w.w3->weight}, [&] { return torch::cat({w.w1->weight, w.w3->weight}); });
    const auto gate_up = input_side(x2, w13, s.selection);
    const auto gate_and_up = gate_up.split(hidden, 1);  // split: its backward is one concatenation, not two zero-filled copies
    act = swiglu_activation(gate_and_up[0], gate_and_up[1]);
  }
  return out_.forward(act, w.w2->weight, s).view(x.sizes());
}

}  // namespace moxlab::engine
