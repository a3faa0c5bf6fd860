// RMSNorm (Zhang & Sennrich 2019), as in LLaMA: y = x / sqrt(mean(x^2) + eps) * g, computed in float32.
#pragma once
#include <torch/torch.h>

namespace moxlab {

// The function form, for weights held as plain tensors.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

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
