#include "core/engine/vit_plan.h"

#include "core/engine/ops.h"

namespace moxlab {

VitPlan::VitPlan(VisionTransformer& model, Form default_form)
    : model_(model), form_(default_form), blocks_(model.blocks, model.options()) {}

torch::Tensor VitPlan::forward(const torch::Tensor& pixels, Analysis* analysis) {
  torch::NoGradGuard no_grad;
  Analysis local;
  local.aux_losses_wanted = false;
  Analysis& an = analysis ? *analysis : local;
  std::vector<LayerIO> layers(model_.blocks->size());
  const auto x = blocks_.forward(model_.embed(pixels), model_.rope(), an, layers, nullptr, form_);
  return model_.head(engine::rms_norm(x, model_.norm->weight, model_.norm->eps()).mean(1));
}

}  // namespace moxlab
