// Display downsampling of long series: a plot is a few hundred pixels wide, so drawing 1e6 points is
// wasted work. For x sorted ascending, the points inside the visible x range are split into `buckets`
// equal-width x buckets and each bucket keeps its first, minimum, maximum and last point (in x order):
// the drawn polyline then has exactly the envelope of the full series (no spike disappears), with at
// most 4 points per bucket. One point on each side of the range is kept so lines reach the edges.
#pragma once
#include <cstddef>
#include <vector>

namespace moxlab::viewer {

struct XY {
  std::vector<double> x, y;
};

// x must be ascending; NaN y values are dropped. buckets >= 1.
XY downsample_minmax(const double* x, const double* y, std::size_t n, double x_lo, double x_hi, int buckets);

}  // namespace moxlab::viewer
