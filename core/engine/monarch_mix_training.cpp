#include "core/engine/monarch_mix_training.h"

#include "kernels/sparse/monarch_mix.h"

namespace moxlab::engine {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct MonarchMixFunction : torch::autograd::Function<MonarchMixFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& b2) {
    const auto x2 = x.reshape({-1, x.size(-1)}).contiguous();
    ctx->save_for_backward({b2.requires_grad() ? x2 : torch::Tensor(), b2});
    return monarch_column_mix(x2, b2.detach()).view(x.sizes());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& b2 = saved[1];
    const auto dy = grads[0].reshape({-1, grads[0].size(-1)}).contiguous();
    torch::Tensor dx, db2;
    // dx[m, j, c] = sum_k b2[c, k, j] dy[m, k, c]: the same mix with each block transposed.
    if (ctx->needs_input_grad(0)) dx = monarch_column_mix(dy, b2.detach().transpose(1, 2)).view(grads[0].sizes());
    if (ctx->needs_input_grad(1)) db2 = monarch_mix_weight_grad(dy, saved[0], b2.size(1));
    return {dx, db2};
  }
};

}  // namespace

bool monarch_mix_training_applies(const torch::Tensor& x, const torch::Tensor& b2) {
  return x.is_cpu() && b2.is_cpu() && x.scalar_type() == torch::kFloat && b2.scalar_type() == torch::kFloat && b2.dim() == 3 &&
         x.dim() >= 1 && x.size(-1) == b2.size(0) * b2.size(1);
}

torch::Tensor monarch_mix_training(const torch::Tensor& x, const torch::Tensor& b2) {
  TORCH_CHECK(monarch_mix_training_applies(x, b2) && b2.size(1) == b2.size(2),
              "Monarch mix training: needs float32 CPU x [..., groups * r] and b2 [r, groups, groups]");
  return MonarchMixFunction::apply(x, b2);
}

}  // namespace moxlab::engine
