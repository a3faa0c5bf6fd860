// Curve arithmetic of the Curves panel: smoothing and mean +- standard error across seeds.
#pragma once
#include <cstdint>
#include <vector>

#include "core/store/run_records.h"

namespace moxlab::viewer {

// Exponential moving average with bias correction (TensorBoard's smoothing): s_t = w s_{t-1} + (1-w) y_t,
// reported as s_t / (1 - w^t) so the start is not pulled towards 0. weight in [0, 1); 0 returns y.
// NaN values are passed through and do not update the average.
std::vector<double> ema_smooth(const std::vector<double>& y, double weight);

// Mean and standard error of several runs' curves at each step that at least one run logged.
// std_err = sample standard deviation (n - 1) / sqrt(n), 0 when n = 1.
struct CurveBand {
  std::vector<double> step, mean, std_err;
  std::vector<int> n;
};
CurveBand mean_band(const std::vector<std::vector<MetricPoint>>& curves);

}  // namespace moxlab::viewer
