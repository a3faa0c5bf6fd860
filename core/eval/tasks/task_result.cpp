#include "core/eval/tasks/task_result.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/common/error.h"

namespace moxlab {

std::string AuditRow::to_json() const {
  // nlohmann::ordered_json keeps the keys in the documented order, which makes rows diffable.
  nlohmann::ordered_json j;
  j["item"] = item;
  nlohmann::ordered_json ll = nlohmann::ordered_json::array();
  for (double v : loglik) ll.push_back(std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr));
  j["loglik"] = std::move(ll);
  nlohmann::ordered_json g = nlohmann::ordered_json::array();
  for (bool b : greedy) g.push_back(b);
  j["greedy"] = std::move(g);
  j["tokens"] = tokens;
  if (pred >= 0) j["pred"] = pred;
  if (pred_norm >= 0) j["pred_norm"] = pred_norm;
  if (gold >= 0) j["gold"] = gold;
  return j.dump();
}

const MetricResult& TaskResult::metric(const std::string& name) const {
  for (const MetricResult& m : metrics)
    if (m.name == name) return m;
  throw Error("task " + task + " reported no metric '" + name + "'");
}

}  // namespace moxlab
