// The engine's registry lists a plan for every kind the model's registry has, a model of every kind runs
// through the engine in every form, and the model's MoH top-K (a stable sort) picks what the engine's
// one-pass kernel picks, ties included.
#include "tests/torch_catch.h"

#include <set>

#include "core/engine/inference_plan.h"
#include "core/engine/plan_kinds.h"
#include "core/model/model_kind.h"
#include "core/model/moh/head_router.h"
#include "kernels/sparse/top_k_mask.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

TEST_CASE("Every model kind has an engine plan, and nothing else does", "[engine]") {
  std::set<std::string> model_names, plan_names;
  for (const auto& k : model_kinds()) model_names.insert(k.name);
  for (const auto& k : engine::plan_kinds()) plan_names.insert(k.name);
  CHECK(model_names == plan_names);
  for (const auto& k : engine::plan_kinds()) {
    INFO(k.name);
    const auto& m = *find_model_kind(k.name);
    CHECK(static_cast<bool>(k.attention) == !m.attention_help.empty());  // a plan for each part the kind has
    CHECK(static_cast<bool>(k.ffn) == !m.ffn_help.empty());
  }
  CHECK_THROWS_WITH(engine::find_plan_kind("nope"), Catch::Contains("no plan for kind 'nope' (known: dense, mohd, moh, tomoe)"));
}

TEST_CASE("The MoH router's top-K selection equals the kernel's on tied scores (ties to the lower index)", "[engine][moh]") {
  torch::manual_seed(12);
  // Scores from a few distinct values: many rows with ties across the cut.
  const auto scores = torch::randint(0, 3, {200, 7}).to(torch::kFloat) / 2.0;
  for (int k : {0, 1, 3, 7}) {
    INFO("k " << k);
    CHECK(torch::equal(top_k_selection(scores, k), top_k_mask(scores, k)));
  }
}
