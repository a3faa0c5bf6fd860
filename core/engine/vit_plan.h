// A VisionTransformer (core/model/vision_transformer.h) as the engine runs it without autograd: the
// blocks on their plans (core/engine/block_plans.h), the final norm fused; image evaluation and image
// captures go through it.
#pragma once
#include <torch/torch.h>

#include "core/engine/block_plans.h"
#include "core/engine/form.h"
#include "core/model/vision_transformer.h"

namespace moxlab {

class VitPlan {
 public:
  explicit VitPlan(VisionTransformer& model, Form default_form = Form::automatic);
  // pixels as VisionTransformer::forward takes them -> logits [B, classes]; `analysis` as InferencePlan's.
  torch::Tensor forward(const torch::Tensor& pixels, Analysis* analysis = nullptr);

 private:
  VisionTransformer& model_;
  Form form_;
  engine::BlockPlans blocks_;
};

}  // namespace moxlab
