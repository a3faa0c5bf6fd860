#include "core/model/tomoe/tomoe_regularisers.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/batch_statistics.h"

namespace moxlab {

torch::Tensor log_ratio_distance(const torch::Tensor& x, double y) {
  require(y > 0, "log-ratio distance: target must be > 0");
  // log(max/min) = |log x - log y|; the gradient is sign(x - y) / x, zero at x == y.
  return (torch::log(x) - std::log(y)).abs();
}

torch::Tensor union_of_masks(const torch::Tensor& masks) {
  require(masks.dim() >= 2, "union of masks: expected [..., n, width]");
  return 1.0 - (1.0 - masks).prod(-2);
}

torch::Tensor union_regulariser(const std::vector<torch::Tensor>& unions) {
  require(!unions.empty(), "union regulariser: no layers");
  torch::Tensor sum;
  for (const auto& u : unions) {
    auto term = log_ratio_distance(u.mean(), 1.0);  // sum(u) / |u|
    sum = sum.defined() ? sum + term : term;
  }
  return sum / static_cast<double>(unions.size());
}

torch::Tensor max_width(const torch::Tensor& masks) {
  require(masks.dim() == 2 && masks.size(0) > 0, "max width: expected masks [rows, width]");
  return masks.sum(-1).max();
}

torch::Tensor active_parameters(const TomoeShape& s, const std::vector<LayerWidths>& layers) {
  require(!layers.empty(), "active parameters: no layers");
  const double attn = static_cast<double>(s.dim) * (s.n_heads + s.n_kv_heads);  // per kept head dim, Q+K or V+O
  const double mlp = 3.0 * s.dim;                                                 // per kept channel
  torch::Tensor t;
  for (const auto& w : layers) {
    auto layer = attn * w.qk + attn * w.vo + mlp * w.mlp;
    t = t.defined() ? t + layer : layer;
  }
  return t;
}

double total_parameters(const TomoeShape& s, int layers) {
  const double attn = static_cast<double>(s.dim) * (s.n_heads + s.n_kv_heads) * s.head_dim * 2;
  return layers * (attn + 3.0 * s.dim * s.d_mid);
}

torch::Tensor parameter_regulariser(const torch::Tensor& active, double total, double p) {
  require(p > 0 && p <= 1, "parameter regulariser: target ratio p must be in (0, 1], got " + std::to_string(p));
  return log_ratio_distance(active, p * total);
}

torch::Tensor switch_load_balance(const torch::Tensor& one_hot, const torch::Tensor& probs) {
  require(one_hot.sizes() == probs.sizes(), "load balancing: routing and probabilities differ in shape");
  const std::int64_t n = probs.size(-1);
  auto f = batch_mean(one_hot.detach().reshape({-1, n}).to(probs.dtype()).mean(0));  // F_i (whole batch)
  auto p = batch_mean(probs.reshape({-1, n}).mean(0));                                // P_i
  return static_cast<double>(n) * (f * p).sum();
}

torch::Tensor routed_load_balance(const torch::Tensor& route) {
  const std::int64_t n = route.size(-1);
  const auto flat = route.reshape({-1, n});
  return (batch_mean(flat.detach().mean(0)) * batch_mean(flat.mean(0))).sum();
}

}  // namespace moxlab
