#include "viewer/model/box_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moxlab::viewer {

BoxStats box_stats(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
  if (values.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan, nan, nan};
  }
  std::sort(values.begin(), values.end());
  const auto quantile = [&](double p) {  // type 7, see the header
    const double h = (values.size() - 1) * p;
    const std::size_t lo = static_cast<std::size_t>(std::floor(h));
    const std::size_t hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (h - lo) * (values[hi] - values[lo]);
  };
  return {values.front(), quantile(0.25), quantile(0.5), quantile(0.75), values.back()};
}

}  // namespace moxlab::viewer
