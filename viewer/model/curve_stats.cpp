#include "viewer/model/curve_stats.h"

#include <cmath>
#include <map>

namespace moxlab::viewer {

std::vector<double> ema_smooth(const std::vector<double>& y, double weight) {
  std::vector<double> out(y.size());
  double s = 0, norm = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i])) {
      out[i] = y[i];
      continue;
    }
    s = weight * s + (1 - weight) * y[i];
    norm = weight * norm + (1 - weight);  // = 1 - w^t after t values
    out[i] = s / norm;
  }
  return out;
}

CurveBand mean_band(const std::vector<std::vector<MetricPoint>>& curves) {
  // Per step: the last value each run logged there (a resumed run may log a step twice).
  std::map<std::int64_t, std::vector<double>> at;
  for (const auto& curve : curves) {
    std::map<std::int64_t, double> last;
    for (const auto& p : curve)
      if (!std::isnan(p.value)) last[p.step] = p.value;
    for (const auto& [step, v] : last) at[step].push_back(v);
  }
  CurveBand band;
  for (const auto& [step, values] : at) {
    const double n = static_cast<double>(values.size());
    double mean = 0;
    for (double v : values) mean += v;
    mean /= n;
    double ss = 0;
    for (double v : values) ss += (v - mean) * (v - mean);
    band.step.push_back(static_cast<double>(step));
    band.mean.push_back(mean);
    band.std_err.push_back(values.size() > 1 ? std::sqrt(ss / (n - 1)) / std::sqrt(n) : 0.0);
    band.n.push_back(static_cast<int>(values.size()));
  }
  return band;
}

}  // namespace moxlab::viewer
