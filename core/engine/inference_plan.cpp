#include "core/engine/inference_plan.h"

namespace moxlab {

namespace {
// A context for a pass whose auxiliary losses nobody trains on.
ForwardContext inference_context(Kernels form) {
  ForwardContext ctx;
  ctx.kernels = form;
  ctx.aux_losses_wanted = false;
  return ctx;
}
}  // namespace

torch::Tensor InferencePlan::forward(const torch::Tensor& tokens, const ExecOptions& exec) {
  torch::NoGradGuard no_grad;
  ForwardContext ctx = inference_context(exec.form);
  ctx.kv_cache = exec.cache;
  ctx.last_logits_only = exec.last_logits_only;
  ctx.gates_off = exec.gates_off;
  return model_.forward(tokens, ctx);
}

torch::Tensor InferencePlan::attention(int layer, const torch::Tensor& h, Kernels form) {
  torch::NoGradGuard no_grad;
  auto& block = *model_.blocks->ptr<BlockImpl>(layer);
  ForwardContext ctx = inference_context(form);
  return block.attn->forward(h, model_.rope(), ctx, block.taps);
}

torch::Tensor InferencePlan::feed_forward(int layer, const torch::Tensor& h, Kernels form) {
  torch::NoGradGuard no_grad;
  auto& block = *model_.blocks->ptr<BlockImpl>(layer);
  ForwardContext ctx = inference_context(form);
  return block.ffn->forward(h, ctx, block.taps);
}

}  // namespace moxlab
