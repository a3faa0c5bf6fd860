// The engine's side of the kind registry (core/model/model_kind.h is the model's): for each attention and
// FFN kind, its inference plan and the training forms it has. Listed once in plan_kinds.cpp, each kind's
// entry in its own <kind>_plan.cpp; a test holds the two registries to the same names.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/form.h"
#include "core/engine/layer_plan.h"
#include "core/model/block.h"

namespace moxlab::engine {

struct PlanKind {
  std::string name;
  // The inference plan of a module of this kind (null: not an attention / FFN kind).
  std::function<std::unique_ptr<AttentionPlan>(Attention&)> attention;
  std::function<std::unique_ptr<FeedForwardPlan>(FeedForward&)> ffn;
  // Its training form under `form` (empty function: the module's reference forward; null: none at all).
  std::function<decltype(LayerForms::attention)(Attention&, Form)> training_attention;
  std::function<decltype(LayerForms::ffn)(FeedForward&, Form)> training_ffn;
};

const std::vector<PlanKind>& plan_kinds();
// The entry named `name`; an error naming the known kinds when there is none.
const PlanKind& find_plan_kind(const std::string& name);

// Each kind's entry (<kind>_plan.cpp).
PlanKind dense_plan_kind();
PlanKind mohd_plan_kind();
PlanKind moh_plan_kind();
PlanKind tomoe_plan_kind();

}  // namespace moxlab::engine
