#include "core/engine/inference_plan.h"

#include "core/engine/ops.h"
#include "kernels/fused/packed_matmul.h"

namespace moxlab {

InferencePlan::InferencePlan(Transformer& model, Form default_form)
    : model_(model), default_form_(default_form), blocks_(model.blocks, model.options()) {}

Form InferencePlan::resolve(Form form) const { return form == Form::automatic ? default_form_ : form; }

torch::Tensor InferencePlan::forward(const torch::Tensor& tokens, const ExecOptions& exec, Analysis* analysis) {
  torch::NoGradGuard no_grad;
  Analysis local;
  local.aux_losses_wanted = false;  // nobody trains on an inference pass's losses
  Analysis& an = analysis ? *analysis : local;
  const Form form = resolve(exec.form);
  PassOptions pass;
  pass.gates_off = exec.gates_off;
  auto layers = model_.begin_layers(pass);
  auto x = blocks_.forward(model_.tok_embeddings(tokens), model_.rope(), an, layers, exec.cache, form);
  if (exec.last_logits_only) x = x.narrow(1, x.size(1) - 1, 1);
  x = engine::rms_norm(x, model_.norm->weight, model_.norm->eps());
  model_.end_layers(layers, an);
  const auto w = model_.output_weight();
  if (packed_applies(x)) {
    // The head packed once: OpenBLAS repacks the whole [vocab, d] matrix on every call, which costs more
    // than the product itself for a prompt's last positions (docs/decisions/2026-11-26-packed-weight-products.md).
    const auto head = packed_weight(head_.get({w}, [&] { return pack_weight(w); }), w.size(0));
    return packed_linear(x, head);
  }
  return torch::nn::functional::linear(x, w);
}

torch::Tensor InferencePlan::attention(int layer, const torch::Tensor& h, Form form) {
  return one_layer(layer, form, [&](engine::Step& step) { return blocks_.attention(layer).forward(h, step); });
}

torch::Tensor InferencePlan::feed_forward(int layer, const torch::Tensor& h, Form form) {
  return one_layer(layer, form, [&](engine::Step& step) { return blocks_.feed_forward(layer).forward(h, step); });
}

torch::Tensor InferencePlan::one_layer(int layer, Form form, const std::function<torch::Tensor(engine::Step&)>& run) {
  torch::NoGradGuard no_grad;
  Analysis an;
  an.aux_losses_wanted = false;
  auto layers = model_.begin_layers({});
  engine::Step step{model_.rope(), an, model_.blocks->ptr<BlockImpl>(layer)->taps, layers[layer], nullptr, resolve(form)};
  return run(step);
}

}  // namespace moxlab
