#include "core/engine/inference_plan.h"

#include "core/engine/ops.h"
#include "core/engine/plan_kinds.h"
#include "kernels/fused/packed_matmul.h"

namespace moxlab {

InferencePlan::InferencePlan(Transformer& model, Form default_form) : model_(model), default_form_(default_form) {
  const auto& o = model.options();
  const auto& attention = engine::find_plan_kind(o.attention);
  const auto& ffn = engine::find_plan_kind(o.ffn);
  for (std::size_t l = 0; l < model.blocks->size(); ++l) {
    auto& block = *model.blocks->ptr<BlockImpl>(l);
    attention_.push_back(attention.attention(*block.attn));
    ffn_.push_back(ffn.ffn(*block.ffn));
  }
}

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
  auto x = model_.tok_embeddings(tokens);
  // Each block's last residual add fused into the next block's attention norm (the last block's stays
  // apart: the final norm may read only the last position).
  const auto& blocks = model_.blocks;
  torch::Tensor x_normed;
  if (!blocks->is_empty()) {
    const auto& first = *blocks->ptr<BlockImpl>(0)->attn_norm;
    x_normed = engine::rms_norm(x, first.weight, first.eps());
  }
  for (std::size_t l = 0; l < blocks->size(); ++l) {
    auto& block = *blocks->ptr<BlockImpl>(l);
    engine::Step step{model_.rope(), an, block.taps, layers[l], exec.cache, form};
    const auto [h, h_normed] = engine::add_rms_norm(x, attention_[l]->forward(x_normed, step), block.ffn_norm->weight, block.ffn_norm->eps());
    an.tap(block.taps.resid_mid, h);
    const auto f = ffn_[l]->forward(h_normed, step);
    if (l + 1 < blocks->size()) {
      const auto& next = *blocks->ptr<BlockImpl>(l + 1)->attn_norm;
      std::tie(x, x_normed) = engine::add_rms_norm(h, f, next.weight, next.eps());
    } else {
      x = h + f;
    }
    an.tap(block.taps.resid_out, x);
  }
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
  torch::NoGradGuard no_grad;
  Analysis an;
  an.aux_losses_wanted = false;
  auto& block = *model_.blocks->ptr<BlockImpl>(layer);
  auto layers = model_.begin_layers({});
  engine::Step step{model_.rope(), an, block.taps, layers[layer], nullptr, resolve(form)};
  return attention_[layer]->forward(h, step);
}

torch::Tensor InferencePlan::feed_forward(int layer, const torch::Tensor& h, Form form) {
  torch::NoGradGuard no_grad;
  Analysis an;
  an.aux_losses_wanted = false;
  auto& block = *model_.blocks->ptr<BlockImpl>(layer);
  auto layers = model_.begin_layers({});
  engine::Step step{model_.rope(), an, block.taps, layers[layer], nullptr, resolve(form)};
  return ffn_[layer]->forward(h, step);
}

}  // namespace moxlab
