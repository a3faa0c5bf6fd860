#include "core/engine/ops.h"

#include <cmath>

#include "core/engine/monarch_mix_training.h"
#include "core/model/attention.h"
#include "core/model/op_forms.h"
#include "core/model/rmsnorm.h"
#include "kernels/fused/attention.h"
#include "kernels/fused/rms_norm.h"
#include "kernels/fused/rope.h"
#include "kernels/fused/swiglu.h"
#include "kernels/sparse/monarch_mix.h"

namespace moxlab::engine {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  if (rms_norm_fusable(x, weight)) return rms_norm_inference(x, weight, eps);
  return moxlab::rms_norm(x, weight, eps);
}

std::pair<torch::Tensor, torch::Tensor> add_rms_norm(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& weight, double eps) {
  if (rms_norm_fusable(x, weight) && rms_norm_fusable(a, weight) && a.sizes() == x.sizes()) return add_rms_norm_inference(x, a, weight, eps);
  auto sum = x + a;
  return {sum, rms_norm(sum, weight, eps)};
}

torch::Tensor rope_apply(const Rope& rope, const torch::Tensor& x, std::int64_t start) {
  if (rope_fusable(x, rope.cos())) return rope_inference(x, rope.cos(), rope.sin(), start);
  return rope.apply(x, start);
}

torch::Tensor rope_apply_rows(const Rope& rope, const torch::Tensor& x, const torch::Tensor& positions) {
  const auto rows = x.unsqueeze(0);  // [1, n, H, head_dim]: one sequence of rows with their own positions
  if (rope_fusable(rows, rope.cos())) return rope_inference(rows, rope.cos(), rope.sin(), 0, positions).squeeze(0);
  return rope.apply_rows(x, positions);
}

torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal, double scale,
                        const torch::Tensor& gates, const torch::Tensor& dim_scales) {
  if (attention_fusable(q, k, v) && (!gates.defined() || attention_gates_fit(q, gates)) &&
      (!dim_scales.defined() || attention_dim_scales_fit(q, v, dim_scales)))
    return attention_inference(q, k, v, causal, scale == 0 ? 1.0 / std::sqrt(static_cast<double>(q.size(-1))) : scale, gates,
                               dim_scales);
  return dot_product_attention(q, k, v, causal, scale, gates, dim_scales);
}

torch::Tensor swiglu_activation(torch::Tensor gate, const torch::Tensor& up) {
  if (torch::GradMode::is_enabled()) return swiglu_op(gate, up);  // the pass's form (training_forms.h)
  if (swiglu_fusable(gate, up)) return swiglu_inference(gate, up);
  return torch::silu_(gate).mul_(up);
}

torch::Tensor monarch_second_factor(MonarchImpl& m, const torch::Tensor& x) {
  if (!torch::GradMode::is_enabled() && x.is_cpu() && x.scalar_type() == torch::kFloat && m.b2.scalar_type() == torch::kFloat)
    return monarch_column_mix(x.reshape({-1, x.size(-1)}), m.b2).view(x.sizes());
  if (torch::GradMode::is_enabled() && monarch_mix_training_applies(x, m.b2)) return monarch_mix_training(x, m.b2);
  return m.second_factor(x);
}

torch::Tensor monarch(MonarchImpl& m, const torch::Tensor& x) { return monarch_second_factor(m, m.first_factor(x)); }

}  // namespace moxlab::engine
