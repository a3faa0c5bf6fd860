// RMSNorm (Zhang & Sennrich 2019), as in LLaMA: y = x / sqrt(mean(x^2) + eps) * g, computed in float32
// (without autograd on float32 CPU tensors in one pass per row: kernels/fused/rms_norm.h).
#pragma once
#include <torch/torch.h>

namespace moxlab {

// The function form, for models holding their weights as plain tensors (the ToMoE MoE export).
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);
// A residual add and the norm after it: (x + a, rms_norm(x + a)), one pass per row without autograd.
std::pair<torch::Tensor, torch::Tensor> add_rms_norm(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& weight, double eps);

class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  double eps() const { return eps_; }
  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RMSNorm);

}  // namespace moxlab
