#include "core/engine/training_attention.h"

#include <cmath>

#include "kernels/fused/attention_training.h"

namespace moxlab::engine {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct TrainingAttentionFunction : torch::autograd::Function<TrainingAttentionFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                               double scale) {
    auto f = attention_training_forward(q, k, v, causal, scale);
    ctx->save_for_backward({q, k, v, f.probs});
    ctx->saved_data["causal"] = causal;
    ctx->saved_data["scale"] = scale;
    return f.out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto s = ctx->get_saved_variables();
    auto [dq, dk, dv] = attention_training_backward(s[0], s[1], s[2], s[3], grads[0], ctx->saved_data["causal"].toBool(),
                                                    ctx->saved_data["scale"].toDouble());
    return {dq, dk, dv, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor training_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal, double scale) {
  if (!attention_training_applies(q, k, v)) return {};
  const double s = scale == 0 ? 1.0 / std::sqrt(static_cast<double>(q.size(-1))) : scale;
  return TrainingAttentionFunction::apply(q, k, v, causal, s);
}

}  // namespace moxlab::engine
