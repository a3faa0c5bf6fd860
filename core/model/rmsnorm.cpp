#include "core/model/rmsnorm.h"

#include "core/model/op_forms.h"

namespace moxlab {

RMSNormImpl::RMSNormImpl(int dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  auto xf = x.to(torch::kFloat32);
  auto y = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (y * weight).to(x.scalar_type());
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) { return rms_norm_op(x, weight, eps_); }

}  // namespace moxlab
