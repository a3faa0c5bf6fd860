#include "core/engine/training_forms.h"

#include "core/engine/packed_linear.h"
#include "core/engine/plan_kinds.h"
#include "core/engine/training_attention.h"
#include "core/engine/training_elementwise.h"
#include "core/engine/training_loss.h"
#include "core/model/transformer.h"

namespace moxlab {

TrainingForms training_forms(torch::nn::ModuleList& blocks, const ModelOptions& o, Form form) {
  const auto& attention = engine::find_plan_kind(o.attention);
  const auto& ffn = engine::find_plan_kind(o.ffn);
  TrainingForms forms;
  forms.layers.resize(blocks->size());
  for (std::size_t l = 0; l < blocks->size(); ++l) {
    auto& block = *blocks->ptr<BlockImpl>(l);
    if (attention.training_attention) forms.layers[l].attention = attention.training_attention(*block.attn, form);
    if (ffn.training_ffn) forms.layers[l].ffn = ffn.training_ffn(*block.ffn, form);
  }
  if (form != Form::reference) {
    forms.ops = {engine::packed_products(), engine::training_attention, engine::rms_norm_training, engine::swiglu_training,
                 engine::rope_training};
    forms.fused_loss = true;
  }
  return forms;
}

torch::Tensor TrainingForms::lm_loss(const torch::Tensor& logits, const torch::Tensor& targets) const {
  if (fused_loss && engine::training_loss_applies(logits)) return engine::lm_loss_fused(logits, targets);
  return Transformer::lm_loss(logits, targets);
}

}  // namespace moxlab
