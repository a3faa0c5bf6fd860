#include "core/observe/dim_ranks.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace moxlab {

DimRanks rank_dimensions(const ActivationMatrix& x) {
  require_nonempty(x, "dimension ranks");
  DimRanks r;
  r.rows = x.rows;
  r.cols = x.cols;
  r.ranks.resize(static_cast<std::size_t>(x.rows * x.cols));
  std::vector<std::int32_t> order(static_cast<std::size_t>(x.cols));
  for (std::int64_t t = 0; t < x.rows; ++t) {
    const float* v = x.row(t);
    std::iota(order.begin(), order.end(), 0);
    // |x| orders like x^2; the stable sort keeps ties in index order (lower index = lower rank).
    std::stable_sort(order.begin(), order.end(),
                     [v](std::int32_t a, std::int32_t b) { return std::fabs(v[a]) > std::fabs(v[b]); });
    std::int32_t* out = r.ranks.data() + t * x.cols;
    for (std::size_t k = 0; k < order.size(); ++k) out[order[k]] = static_cast<std::int32_t>(k);
  }
  return r;
}

std::int64_t top_count(double percent, std::int64_t d) {
  require(percent > 0 && percent <= 100, "top percent must be in (0, 100]");
  return std::min<std::int64_t>(d, static_cast<std::int64_t>(std::ceil(percent * static_cast<double>(d) / 100.0)));
}

}  // namespace moxlab
