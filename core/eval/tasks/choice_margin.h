// A continuous zero-shot metric beside acc / acc_norm, for models whose accuracy sits at chance: per item
// the log-likelihood margin of the gold choice over the best distractor, loglik(gold) - max_{i != gold}
// loglik(i) in nats (the unnormalised sums acc compares), averaged over items with its standard error; it
// moves when accuracy cannot. Also chance accuracy (the mean of 1 / choices) and whether an accuracy's 95%
// interval (value +- 1.96 stderr) contains it: such an accuracy says nothing about the model.
#pragma once
#include <optional>

#include "core/eval/tasks/task_result.h"

namespace moxlab {

struct ChoiceMargin {
  std::size_t n = 0;
  double margin = 0, margin_stderr = 0;  // nats; stderr = sample stdev / sqrt(n) (NaN for n < 2)
  double chance = 0;                     // mean over items of 1 / number of choices
};

// From a task's audit rows; nullopt for tasks without choices (LAMBADA) or without items.
std::optional<ChoiceMargin> choice_margin(const TaskResult& r);

// Whether the accuracy's 95% interval, value +- 1.96 stderr, contains chance (a NaN stderr: unknown, true).
bool at_chance(const MetricResult& accuracy, double chance);

std::string margin_definition();

}  // namespace moxlab
