#include "core/model/mohd/mohd_components.h"

#include <cmath>

#include "core/model/kind_modules.h"
#include "kernels/fused/attention.h"
#include "kernels/fused/packed_matmul.h"

namespace moxlab {

namespace {
// "blocks.3.attn.router.probs" -> "blocks.3.attn.balance": the name of the balance loss in the logs.
std::string balance_name(const std::string& probs_tap) {
  const std::string suffix = "router.probs";
  return probs_tap.substr(0, probs_tap.size() - suffix.size()) + "balance";
}
}  // namespace

MohdAttention::MohdAttention(const ModelOptions& o) {
  inner = register_module("inner", std::make_shared<DenseAttention>(o));
  mixer = register_module("mixer", MohdMixer(o.dim, o.mohd_attn));
}

torch::Tensor MohdAttention::forward(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx, const BlockTapNames& taps) {
  const auto r = mixer->route(x, ctx, balance_name(taps.attn_router_probs), taps.attn_router_probs, taps.attn_router_topk);
  const auto sparse = mixer->sparse_if_wins(r, ctx);
  if (!sparse) return mixer->combine(inner->forward(mixer->mask_input(x, r), rope, ctx, taps), r);  // Eq. 14
  // Sparse: Q, K, V read only the active input blocks (one matrix: a single grouped product and
  // un-permutation), W_O writes only the active output blocks.
  const auto B = x.size(0), T = x.size(1);
  const auto& s = *sparse;
  const auto& rows = s.selection;
  const auto& a = *inner;
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
          : block_sparse_input_linear_from_tokens(x2, fused_.get(qkv_weights, [&] { return torch::cat(qkv_weights); }), rows, bqkv);
  if (rows.grouped && !ctx.kv_cache && !torch::GradMode::is_enabled()) {
    // The rows stay in routed-block order from Q/K/V to W_O: RoPE at each row's own position, attention
    // reading and writing through the token -> row map (no un-permutation and re-permutation around it).
    auto part = [&](std::int64_t from, std::int64_t width) { return qkv_rows.narrow(1, from, width).view({B * T, width / hd, hd}); };
    const auto v = part(nq + nkv, nkv);
    if (attention_rows_fusable(part(0, nq), part(nq, nkv), v)) {
      const auto positions = rows.order.remainder(T);
      const auto q = rope.apply_rows(part(0, nq), positions), k = rope.apply_rows(part(nq, nkv), positions);
      const auto heads = attention_inference_rows(q, k, v, rows.inverse, B, a.causal(), 1.0 / std::sqrt(static_cast<double>(hd)));
      return mixer->sparse_output(heads, a.wo->weight, s).view(x.sizes());
    }
  }
  const auto qkv = rows.from_rows(qkv_rows);
  auto part = [&](std::int64_t from, std::int64_t width) { return qkv.narrow(1, from, width).view({B, T, width / hd, hd}); };
  const auto heads = a.attend(part(0, nq), part(nq, nkv), part(nq + nkv, nkv), rope, ctx);
  return mixer->sparse_output(rows.to_rows(heads.reshape({B * T, -1})), a.wo->weight, s).view(x.sizes());
}

ParamCount MohdAttention::param_count() const { return mixer->wrap(inner->param_count()); }

MohdFeedForward::MohdFeedForward(const ModelOptions& o) {
  inner = register_module("inner", std::make_shared<SwiGLU>(o));
  mixer = register_module("mixer", MohdMixer(o.dim, o.mohd_ffn));
}

torch::Tensor MohdFeedForward::forward(const torch::Tensor& x, ForwardContext& ctx, const BlockTapNames& taps) {
  const auto r = mixer->route(x, ctx, balance_name(taps.ffn_router_probs), taps.ffn_router_probs, taps.ffn_router_topk);
  const auto sparse = mixer->sparse_if_wins(r, ctx);
  if (!sparse) return mixer->combine(inner->forward(mixer->mask_input(x, r), ctx, taps), r);  // Eq. 16
  // Sparse: W_gate and W_up (one matrix) read only the active input blocks, W_down writes only the active
  // output blocks.
  const auto& s = *sparse;
  const auto& w = *inner;
  const auto hidden = w.w1->weight.size(0);
  const auto x2 = x.reshape({-1, x.size(-1)});
  torch::Tensor act;  // SiLU(gate) * up
  if (s.selection.grouped && packed_applies(x2)) {  // one product per group straight to the activation
    const auto packed = packed_.get({w.w1->weight, w.w3->weight}, [&] { return pack_swiglu_weight(w.w1->weight, w.w3->weight); });
    act = block_sparse_input_packed(x2, packed_weight(packed, hidden, true), s.selection);
  } else {
    const auto w13 = fused_.get({w.w1->weight, w.w3->weight}, [&] { return torch::cat({w.w1->weight, w.w3->weight}); });
    const auto gate_up = block_sparse_input_linear_from_tokens(x2, w13, s.selection);
    act = swiglu_activation(gate_up.narrow(1, 0, hidden), gate_up.narrow(1, hidden, hidden));
  }
  return mixer->sparse_output(act, w.w2->weight, s).view(x.sizes());
}

ParamCount MohdFeedForward::param_count() const { return mixer->wrap(inner->param_count()); }

KindModules mohd_kind_modules() {
  return {[](const ModelOptions& o, int) { return std::make_shared<MohdAttention>(o); },
          [](const ModelOptions& o, int) { return std::make_shared<MohdFeedForward>(o); }};
}

}  // namespace moxlab
