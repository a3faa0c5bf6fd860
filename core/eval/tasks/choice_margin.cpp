#include "core/eval/tasks/choice_margin.h"

#include <cmath>
#include <vector>

#include "core/eval/tasks/harness_metrics.h"

namespace moxlab {

std::optional<ChoiceMargin> choice_margin(const TaskResult& r) {
  std::vector<double> margins, chances;
  for (const AuditRow& row : r.audit) {
    if (row.gold < 0 || row.loglik.size() < 2) continue;
    double best_other = -INFINITY;
    for (std::size_t i = 0; i < row.loglik.size(); ++i)
      if (static_cast<int>(i) != row.gold) best_other = std::max(best_other, row.loglik[i]);
    margins.push_back(row.loglik[row.gold] - best_other);
    chances.push_back(1.0 / static_cast<double>(row.loglik.size()));
  }
  if (margins.empty()) return std::nullopt;
  ChoiceMargin m;
  m.n = margins.size();
  m.margin = harness_mean(margins);
  m.margin_stderr = mean_stderr(margins);
  m.chance = harness_mean(chances);
  return m;
}

bool at_chance(const MetricResult& accuracy, double chance) {
  if (!std::isfinite(accuracy.std_err)) return true;
  return std::fabs(accuracy.value - chance) <= 1.96 * accuracy.std_err;
}

std::string margin_definition() {
  return "margin: mean over items of loglik(gold) - max over the other choices of loglik (nats; the unnormalised "
         "sums acc compares); stderr = sample stdev / sqrt(n); positive = the gold choice is preferred";
}

}  // namespace moxlab
