// RMSNorm (Zhang & Sennrich 2019) for inference in one pass per row: y = x / sqrt(mean(x^2) + eps) * w,
// instead of six tensor ops (square, mean, add, rsqrt and two products) each reading the activations.
// float32 CPU, last dimension contiguous, no autograd (rms_norm_fusable says when it applies).
#pragma once
#include <torch/torch.h>

namespace moxlab {

bool rms_norm_fusable(const torch::Tensor& x, const torch::Tensor& w);
torch::Tensor rms_norm_inference(const torch::Tensor& x, const torch::Tensor& w, double eps);
// The pre-norm block's residual add fused into the norm after it: (x + a, RMSNorm(x + a)) in one pass per
// row. x and a of one shape, each rms_norm_fusable.
std::pair<torch::Tensor, torch::Tensor> add_rms_norm_inference(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& w,
                                                               double eps);

}  // namespace moxlab
