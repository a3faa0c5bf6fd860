#include "core/engine/training_loss.h"

#include "kernels/fused/cross_entropy.h"

namespace moxlab::engine {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct CrossEntropyFunction : torch::autograd::Function<CrossEntropyFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& logits, const torch::Tensor& targets) {
    const auto v = logits.size(-1);
    const auto x = logits.reshape({-1, v}).contiguous();
    const auto t = targets.reshape({-1}).to(torch::kLong).contiguous();
    TORCH_CHECK(t.size(0) == x.size(0), "lm loss: ", t.size(0), " targets for ", x.size(0), " rows of logits");
    TORCH_CHECK(t.numel() == 0 || (t.max().item<std::int64_t>() < v && t.min().item<std::int64_t>() >= -1),
                "lm loss: a target id is outside [-1, ", v, ")");
    auto probs = torch::empty_like(x);
    auto loss = torch::empty({x.size(0)}, x.options());
    softmax_cross_entropy(x.data_ptr<float>(), t.data_ptr<std::int64_t>(), x.size(0), v, probs.data_ptr<float>(), loss.data_ptr<float>());
    const auto kept = (t >= 0).sum().item<std::int64_t>();
    ctx->save_for_backward({probs, t});
    ctx->saved_data["kept"] = kept;
    ctx->saved_data["shape"] = logits.sizes().vec();
    ctx->saved_data["used"] = false;
    // Mean over the kept targets (LibTorch: NaN when none is kept; here too, 0 / 0).
    return loss.sum().div(static_cast<double>(kept));
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    TORCH_CHECK(!ctx->saved_data["used"].toBool(), "lm loss: the fused loss's backward runs once (its probabilities become the gradient)");
    ctx->saved_data["used"] = true;
    const auto saved = ctx->get_saved_variables();
    auto probs = saved[0];
    const auto& t = saved[1];
    const double scale = grads[0].item<double>() / static_cast<double>(ctx->saved_data["kept"].toInt());
    softmax_cross_entropy_grad(probs.data_ptr<float>(), t.data_ptr<std::int64_t>(), probs.size(0), probs.size(1), static_cast<float>(scale));
    return {probs.view(ctx->saved_data["shape"].toIntVector()), torch::Tensor()};
  }
};

}  // namespace

bool training_loss_applies(const torch::Tensor& logits) {
  return logits.is_cpu() && logits.scalar_type() == torch::kFloat && logits.dim() >= 1 && logits.size(-1) > 0;
}

torch::Tensor lm_loss_fused(const torch::Tensor& logits, const torch::Tensor& targets) {
  TORCH_CHECK(training_loss_applies(logits), "lm loss: the fused loss needs float32 CPU logits");
  return CrossEntropyFunction::apply(logits, targets);
}

}  // namespace moxlab::engine
