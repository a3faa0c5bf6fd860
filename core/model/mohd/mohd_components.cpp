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
  auto routed = mixer->route(x, ctx, balance_name(taps.attn_router_probs), taps.attn_router_probs, taps.attn_router_topk);
  return mixer->combine(inner->forward(routed.x_s, rope, ctx, taps), routed.routing);  // Eq. 14
}

ParamCount MohdAttention::param_count() const { return mixer->wrap(inner->param_count()); }

MohdFeedForward::MohdFeedForward(const ModelOptions& o) {
  inner = register_module("inner", std::make_shared<SwiGLU>(o));
  mixer = register_module("mixer", MohdMixer(o.dim, o.mohd_ffn));
}

torch::Tensor MohdFeedForward::forward(const torch::Tensor& x, ForwardContext& ctx, const BlockTapNames& taps) {
  auto routed = mixer->route(x, ctx, balance_name(taps.ffn_router_probs), taps.ffn_router_probs, taps.ffn_router_topk);
  return mixer->combine(inner->forward(routed.x_s, ctx, taps), routed.routing);  // Eq. 16
}

ParamCount MohdFeedForward::param_count() const { return mixer->wrap(inner->param_count()); }

}  // namespace moxlab
