#include "core/model/mohd/mohd_components.h"

#include "core/model/kind_modules.h"

namespace moxlab {

std::string balance_loss_name(const std::string& probs_tap) {
  const std::string suffix = "router.probs";
  return probs_tap.substr(0, probs_tap.size() - suffix.size()) + "balance";
}

MohdAttention::MohdAttention(const ModelOptions& o) {
  inner = register_module("inner", std::make_shared<DenseAttention>(o));
  mixer = register_module("mixer", MohdMixer(o.dim, o.mohd_attn));
}

torch::Tensor MohdAttention::forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO& io) {
  return forward_routed(x, route(x, an, taps), rope, an, taps, io);
}

SubDimRouting MohdAttention::route(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps) {
  return mixer->route(x, an, balance_loss_name(taps.attn_router_probs), taps.attn_router_probs, taps.attn_router_topk);
}

torch::Tensor MohdAttention::forward_routed(const torch::Tensor& x, const SubDimRouting& r, const Rope& rope, Analysis& an,
                                            const BlockTapNames& taps, LayerIO& io) {
  return mixer->combine(inner->forward(mixer->mask_input(x, r), rope, an, taps, io), r);  // Eq. 14
}

ParamCount MohdAttention::param_count() const { return mixer->wrap(inner->param_count()); }

MohdFeedForward::MohdFeedForward(const ModelOptions& o) {
  inner = register_module("inner", std::make_shared<SwiGLU>(o));
  mixer = register_module("mixer", MohdMixer(o.dim, o.mohd_ffn));
}

torch::Tensor MohdFeedForward::forward(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO& io) {
  return forward_routed(x, route(x, an, taps), an, taps, io);
}

SubDimRouting MohdFeedForward::route(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps) {
  return mixer->route(x, an, balance_loss_name(taps.ffn_router_probs), taps.ffn_router_probs, taps.ffn_router_topk);
}

torch::Tensor MohdFeedForward::forward_routed(const torch::Tensor& x, const SubDimRouting& r, Analysis& an,
                                              const BlockTapNames& taps, LayerIO& io) {
  return mixer->combine(inner->forward(mixer->mask_input(x, r), an, taps, io), r);  // Eq. 16
}

ParamCount MohdFeedForward::param_count() const { return mixer->wrap(inner->param_count()); }

KindModules mohd_kind_modules() {
  return {[](const ModelOptions& o, int) { return std::make_shared<MohdAttention>(o); },
          [](const ModelOptions& o, int) { return std::make_shared<MohdFeedForward>(o); }};
}

}  // namespace moxlab
