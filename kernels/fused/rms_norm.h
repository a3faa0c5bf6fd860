// RMSNorm (Zhang & Sennrich 2019) for inference in one pass per row: y = x / sqrt(mean(x^2) + eps) * w,
// instead of six tensor ops (square, mean, add, rsqrt and two products) each reading the activations.
// float32 CPU, last dimension contiguous, no autograd (rms_norm_fusable says when it applies). Training:
// the forward keeps each row's 1 / RMS and the backward reads it, two passes per row over dy and x.
#pragma once
#include <torch/torch.h>

namespace moxlab {

bool rms_norm_fusable(const torch::Tensor& x, const torch::Tensor& w);
torch::Tensor rms_norm_inference(const torch::Tensor& x, const torch::Tensor& w, double eps);
// The pre-norm block's residual add fused into the norm after it: (x + a, RMSNorm(x + a)) in one pass per
// row. x and a of one shape, each rms_norm_fusable.
std::pair<torch::Tensor, torch::Tensor> add_rms_norm_inference(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& w,
                                                               double eps);

// Training's passes (called inside an autograd function; core/engine/training_elementwise.h): contiguous
// float32 CPU x [..., d] and w [d] (rms_norm_training_fits).
bool rms_norm_training_fits(const torch::Tensor& x, const torch::Tensor& w);
struct RmsNormForward {
  torch::Tensor y, inv_rms;  // inv_rms [rows]: 1 / sqrt(mean(x^2) + eps)
};
RmsNormForward rms_norm_training_forward(const torch::Tensor& x, const torch::Tensor& w, double eps);
// (dx, dw) of y = x r w, r = inv_rms: dx = r w dy - x r^3 mean(w dy x) per row, dw = sum over rows of dy x r.
std::pair<torch::Tensor, torch::Tensor> rms_norm_backward(const torch::Tensor& dy, const torch::Tensor& x, const torch::Tensor& w,
                                                          const torch::Tensor& inv_rms);

}  // namespace moxlab
