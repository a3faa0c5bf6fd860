#include "core/model/mohd/sub_dim_router.h"

#include "core/common/error.h"

namespace moxlab {

SubDimRouterImpl::SubDimRouterImpl(int dim, const MohdOptions& o)
    : n_(o.sub_dims), active_(o.active), shared_(o.shared),
      scaling_(!o.scaling ? GateScaling::none : o.alpha == "k_over_sum" ? GateScaling::k_over_sum : GateScaling::n_sum) {
  require(n_ >= 1 && active_ >= 1 && active_ <= n_ && shared_ >= 0 && shared_ <= active_,
          "MoHD router needs 0 <= shared <= active <= sub_dims");
  centroids = register_module("centroids", torch::nn::Linear(torch::nn::LinearOptions(dim, n_).bias(false)));
}

SubDimRouting SubDimRouterImpl::forward(const torch::Tensor& x) { return route_logits(centroids(x)); }

SubDimRouting SubDimRouterImpl::route_logits(const torch::Tensor& logits) const {
  SubDimRouting r;
  r.probs = torch::softmax(logits, -1);  // Eq. 11: s_i = Softmax_i(x^T phi_i)
  // Eq. 12: shared sub-dimensions 0..shared-1 always; top (active - shared) of the specialised rest.
  auto active = torch::zeros_like(r.probs, torch::kBool);
  if (shared_ > 0) active.narrow(-1, 0, shared_).fill_(true);
  const int routed = active_ - shared_;
  if (routed > 0) {
    auto specialised = r.probs.narrow(-1, shared_, n_ - shared_);
    auto top = std::get<1>(specialised.detach().topk(routed, -1));
    active.narrow(-1, shared_, n_ - shared_).scatter_(-1, top, true);
  }
  r.active = active;
  r.gates = r.probs * active.to(r.probs.dtype());  // gradient reaches the router through the kept scores
  // alpha (Sec. 4.2) lifts the softmax weights (< 1) back up: N * sum(g), or K / sum(g).
  const auto sum = r.gates.sum(-1, true);
  if (scaling_ == GateScaling::n_sum) r.weights = r.gates * (static_cast<double>(n_) * sum);
  else if (scaling_ == GateScaling::k_over_sum) r.weights = r.gates * (static_cast<double>(active_) / sum.clamp_min(1e-30));
  else r.weights = r.gates;
  return r;
}

}  // namespace moxlab
