#include "core/engine/plan_kinds.h"

#include "core/common/error.h"

namespace moxlab::engine {

const std::vector<PlanKind>& plan_kinds() {
  static const std::vector<PlanKind> kinds{dense_plan_kind(), mohd_plan_kind(), moh_plan_kind(), tomoe_plan_kind()};
  return kinds;
}

const PlanKind& find_plan_kind(const std::string& name) {
  std::string known;
  for (const auto& k : plan_kinds()) {
    if (k.name == name) return k;
    known += (known.empty() ? "" : ", ") + k.name;
  }
  throw Error("the engine has no plan for kind '" + name + "' (known: " + known + ")");
}

}  // namespace moxlab::engine
