// RMSNorm (Zhang & Sennrich 2019), as in LLaMA: y = x / sqrt(mean(x^2) + eps) * g, computed in float32
// (without autograd on float32 CPU tensors in one pass per row: kernels/fused/rms_norm.h).
#pragma once
#include <torch/torch.h>

namespace moxlab {

// The function form, for models holding their weights as plain tensors (the ToMoE MoE export).
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RMSNorm);

}  // namespace moxlab
