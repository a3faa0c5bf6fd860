#include "core/model/rmsnorm.h"

#include "kernels/fused/rms_norm.h"

namespace moxlab {

RMSNormImpl::RMSNormImpl(int dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  if (rms_norm_fusable(x, weight)) return rms_norm_inference(x, weight, eps);
  auto xf = x.to(torch::kFloat32);
  auto y = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (y * weight).to(x.scalar_type());
}

std::pair<torch::Tensor, torch::Tensor> add_rms_norm(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& weight, double eps) {
  if (rms_norm_fusable(x, weight) && rms_norm_fusable(a, weight) && a.sizes() == x.sizes()) return add_rms_norm_inference(x, a, weight, eps);
  auto sum = x + a;
  return {sum, rms_norm(sum, weight, eps)};
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) { return rms_norm(x, weight, eps_); }

}  // namespace moxlab
