// Straight-through estimator (Bengio et al. 2013; MoH Eq. 10, ToMoE Eq. 14-15): the forward value of
// `quantised`, the gradient of `real`. Discrete decisions (top-k heads, one-hot experts, 0/1 channel
// masks) train through the relaxation they were rounded from.
#pragma once
#include <torch/torch.h>

namespace moxlab {

inline torch::Tensor straight_through(const torch::Tensor& real, const torch::Tensor& quantised) {
  return real + (quantised - real).detach();
}

}  // namespace moxlab
