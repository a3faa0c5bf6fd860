#include "core/engine/training_forms.h"

#include "core/engine/plan_kinds.h"

namespace moxlab {

ModuleForms training_forms(torch::nn::ModuleList& blocks, const ModelOptions& o, Form form) {
  const auto& attention = engine::find_plan_kind(o.attention);
  const auto& ffn = engine::find_plan_kind(o.ffn);
  ModuleForms forms(blocks->size());
  for (std::size_t l = 0; l < blocks->size(); ++l) {
    auto& block = *blocks->ptr<BlockImpl>(l);
    if (attention.training_attention) forms[l].attention = attention.training_attention(*block.attn, form);
    if (ffn.training_ffn) forms[l].ffn = ffn.training_ffn(*block.ffn, form);
  }
  return forms;
}

}  // namespace moxlab
