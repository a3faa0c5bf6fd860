#include "viewer/model/downsample.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace moxlab::viewer {

XY downsample_minmax(const double* x, const double* y, std::size_t n, double x_lo, double x_hi, int buckets) {
  XY out;
  if (n == 0) return out;
  buckets = std::max(1, buckets);
  // Visible index range, widened by one point on each side.
  std::size_t begin = static_cast<std::size_t>(std::lower_bound(x, x + n, x_lo) - x);
  std::size_t end = static_cast<std::size_t>(std::upper_bound(x, x + n, x_hi) - x);
  if (begin > 0) --begin;
  if (end < n) ++end;
  if (end <= begin) return out;
  auto push = [&](std::size_t i) {
    if (std::isnan(y[i])) return;
    out.x.push_back(x[i]);
    out.y.push_back(y[i]);
  };
  if (end - begin <= static_cast<std::size_t>(4 * buckets)) {
    for (std::size_t i = begin; i < end; ++i) push(i);
    return out;
  }
  const double width = (x_hi - x_lo) / buckets;
  std::size_t i = begin;
  while (i < end) {
    if (std::isnan(x[i])) {  // not ascending: skip rather than loop forever
      ++i;
      continue;
    }
    // The bucket of point i; points left or right of the range form their own buckets.
    const double b = width > 0 ? std::floor((x[i] - x_lo) / width) : 0;
    std::size_t first = end, last = end, lo = end, hi = end;
    for (; i < end; ++i) {
      const double bi = width > 0 ? std::floor((x[i] - x_lo) / width) : 0;
      if (bi != b) break;
      if (std::isnan(y[i])) continue;
      if (first == end) first = lo = hi = i;
      last = i;
      if (y[i] < y[lo]) lo = i;
      if (y[i] > y[hi]) hi = i;
    }
    if (first == end) continue;
    std::array<std::size_t, 4> keep{first, lo, hi, last};
    std::sort(keep.begin(), keep.end());
    for (std::size_t k = 0; k < keep.size(); ++k)
      if (k == 0 || keep[k] != keep[k - 1]) push(keep[k]);
  }
  return out;
}

}  // namespace moxlab::viewer
