#include "core/model/tomoe/gumbel_gates.h"

#include <ATen/CPUGeneratorImpl.h>

#include <limits>

#include "core/common/error.h"
#include "core/model/straight_through.h"

namespace moxlab {

namespace {
void check_gate_args(const torch::Tensor& logits, const torch::Tensor& noise, double tau, const char* what) {
  require(tau > 0, std::string(what) + ": temperature must be > 0, got " + std::to_string(tau));
  require(logits.sizes() == noise.sizes(), std::string(what) + ": noise must have the logits' shape");
}
}  // namespace

torch::Tensor gumbel_noise(at::IntArrayRef shape, at::Generator gen, const torch::TensorOptions& options) {
  // u in [tiny, 1): log(u) < 0, so -log(-log u) is finite; uniform_ itself excludes the upper end.
  auto u = torch::empty(shape, options).uniform_(0.0, 1.0, gen).clamp_min(std::numeric_limits<float>::min());
  return -torch::log(-torch::log(u));
}

torch::Tensor gate_noise(const torch::Tensor& like, bool training) {
  if (!training) return torch::zeros_like(like);
  return gumbel_noise(like.sizes(), at::detail::getDefaultCPUGenerator(), like.options().requires_grad(false));
}

torch::Tensor st_gumbel_softmax(const torch::Tensor& logits, const torch::Tensor& noise, double tau) {
  check_gate_args(logits, noise, tau, "ST-Gumbel-Softmax");
  auto soft = torch::softmax((logits + noise) / tau, -1);
  auto hard = torch::zeros_like(soft).scatter_(-1, soft.detach().argmax(-1, true), 1.0);
  return straight_through(soft, hard);
}

torch::Tensor st_gumbel_sigmoid(const torch::Tensor& logits, const torch::Tensor& noise, double tau, double offset) {
  check_gate_args(logits, noise, tau, "ST-Gumbel-Sigmoid");
  auto z = logits + noise + offset;
  auto soft = torch::sigmoid(z / tau);
  auto hard = (z.detach() >= 0).to(soft.dtype());  // sigmoid(z / tau) >= 0.5 exactly when z >= 0
  return straight_through(soft, hard);
}

}  // namespace moxlab
