#include "core/model/mohd/monarch.h"

#include <cmath>

#include "core/common/error.h"

namespace moxlab {

MonarchImpl::MonarchImpl(int dim, int groups, bool identity)
    : dim_(dim), groups_(groups), r_(groups > 0 ? dim / groups : 0), identity_(identity) {
  require(groups >= 1 && dim % groups == 0, "Monarch fusion: dim " + std::to_string(dim) +
                                                " is not divisible by the group count " + std::to_string(groups));
  // Initialised like a linear layer of each block's fan-in (NOTES.md): U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  b1 = register_parameter("b1", torch::empty({groups_, r_, r_}).uniform_(-1.0 / std::sqrt(r_), 1.0 / std::sqrt(r_)));
  b2 = register_parameter("b2", torch::empty({r_, groups_, groups_})
                                    .uniform_(-1.0 / std::sqrt(groups_), 1.0 / std::sqrt(groups_)));
  post_init();
}

void MonarchImpl::post_init() {
  if (!identity_) return;
  torch::NoGradGuard ng;
  // B1 = I and B2 = I, so M = P^T I P I = I.
  b1.copy_(torch::eye(r_, b1.options()).expand({groups_, r_, r_}));
  b2.copy_(torch::eye(groups_, b2.options()).expand({r_, groups_, groups_}));
}

torch::Tensor MonarchImpl::forward(const torch::Tensor& x) { return second_factor(first_factor(x)); }

torch::Tensor MonarchImpl::first_factor(const torch::Tensor& x) {
  auto h = x.reshape({-1, groups_, r_});                 // grid [groups, r]: block g holds x[g r : (g+1) r]
  return torch::einsum("ngi,goi->ngo", {h, b1}).reshape(x.sizes());  // B1: one r x r block per group
}

torch::Tensor MonarchImpl::second_factor(const torch::Tensor& x) {
  auto h = x.reshape({-1, groups_, r_}).transpose(1, 2);  // P: read the grid column-wise -> [r, groups]
  h = torch::einsum("nrj,rkj->nrk", {h, b2});             // B2: one groups x groups block per column
  return h.transpose(1, 2).reshape(x.sizes());            // P^T: back to [groups, r] order
}

torch::Tensor MonarchImpl::fold_first_factor(const torch::Tensor& w) {
  const auto k = w.size(1);
  return torch::bmm(b1, w.reshape({groups_, r_, k})).reshape({dim_, k});  // row block g: b1[g] w_g
}

torch::Tensor MonarchImpl::dense() {
  torch::NoGradGuard ng;
  return forward(torch::eye(dim_, b1.options())).t();  // column j = M e_j
}

}  // namespace moxlab
