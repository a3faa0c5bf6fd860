#include "core/model/mohd/sub_dim_router.h"

#include "core/common/error.h"

namespace moxlab {

SubDimRouterImpl::SubDimRouterImpl(int dim, const MohdOptions& o)
    : n_(o.sub_dims), active_(o.active), shared_(o.shared), scaling_(o.scaling) {
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
  // alpha = N * sum of the active gates (Sec. 4.2) lifts the softmax weights (< 1) back up.
  r.weights = scaling_ ? r.gates * (static_cast<double>(n_) * r.gates.sum(-1, true)) : r.gates;
  return r;
}

}  // namespace moxlab
