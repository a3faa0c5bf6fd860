#include "core/model/mohd/mohd_components.h"

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
  // Sparse: Q, K, V read only the active input blocks, W_O writes only the active output blocks.
  const auto B = x.size(0), T = x.size(1);
  const auto& s = *sparse;
  const auto& rows = s.selection;
  const auto x2 = rows.to_rows(x.reshape({B * T, x.size(2)}));
  const auto& a = *inner;
  auto project = [&](const torch::nn::Linear& w, int heads) {  // back in token order: attention needs positions
    return rows.from_rows(block_sparse_input_linear(x2, w->weight, rows, w->bias)).view({B, T, heads, a.head_dim()});
  };
  const auto heads = a.attend(project(a.wq, a.n_heads()), project(a.wk, a.n_kv_heads()), project(a.wv, a.n_kv_heads()), rope, ctx);
  return rows.from_rows(mixer->sparse_output(rows.to_rows(heads.reshape({B * T, -1})), a.wo->weight, s)).view(x.sizes());
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
  // Sparse: W_gate and W_up read only the active input blocks, W_down writes only the active output blocks.
  const auto& s = *sparse;
  const auto x2 = s.selection.to_rows(x.reshape({-1, x.size(-1)}));
  const auto act = torch::silu(block_sparse_input_linear(x2, inner->w1->weight, s.selection)) *
                   block_sparse_input_linear(x2, inner->w3->weight, s.selection);
  return s.selection.from_rows(mixer->sparse_output(act, inner->w2->weight, s)).view(x.sizes());
}

ParamCount MohdFeedForward::param_count() const { return mixer->wrap(inner->param_count()); }

}  // namespace moxlab
