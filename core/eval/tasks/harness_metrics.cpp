#include "core/eval/tasks/harness_metrics.h"

#include <cmath>
#include <limits>

#include "core/common/error.h"

namespace moxlab {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

std::size_t numpy_argmax(const std::vector<double>& values) {
  require(!values.empty(), "argmax of an empty list");
  std::size_t best = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) return i;  // numpy propagates NaN: the first NaN is the argmax
    if (values[i] > values[best]) best = i;  // strict: ties keep the earlier index
  }
  return best;
}

double python_sum(const std::vector<double>& values) {
  // Neumaier compensation, as CPython >= 3.12's sum() of floats; the compensation term is only
  // added when finite (so an infinite loglikelihood gives inf, not NaN).
  double sum = 0.0;
  double comp = 0.0;
  for (double x : values) {
    const double t = sum + x;
    comp += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  if (comp != 0.0 && std::isfinite(comp)) sum += comp;
  return sum;
}

double harness_mean(const std::vector<double>& values) {
  require(!values.empty(), "mean of an empty list");
  return python_sum(values) / static_cast<double>(values.size());
}

double sample_stddev(const std::vector<double>& values) {
  if (values.size() < 2) return kNaN;
  const double mu = harness_mean(values);
  std::vector<double> squares;
  squares.reserve(values.size());
  for (double v : values) squares.push_back((v - mu) * (v - mu));
  return std::sqrt(python_sum(squares) / static_cast<double>(values.size() - 1));
}

double mean_stderr(const std::vector<double>& values) {
  if (values.size() < 2) return kNaN;
  return sample_stddev(values) / std::sqrt(static_cast<double>(values.size()));
}

double harness_perplexity(const std::vector<double>& logliks) { return std::exp(-harness_mean(logliks)); }

double perplexity_stderr_delta(const std::vector<double>& logliks) {
  if (logliks.size() < 2) return kNaN;
  return harness_perplexity(logliks) * mean_stderr(logliks);
}

}  // namespace moxlab
