// Five-number summaries for box plots (ToMoE Fig. 8: the spread of expert widths in each layer).
#pragma once
#include <vector>

namespace moxlab::viewer {

struct BoxStats {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
};

// Quartiles by linear interpolation between order statistics (Hyndman & Fan type 7, numpy's and R's
// default): with the values sorted x_0 <= ... <= x_{n-1}, the p-quantile sits at position h = (n - 1) p and
// is x_floor(h) + (h - floor(h)) (x_floor(h)+1 - x_floor(h)). So q1 = Q(0.25), median = Q(0.5),
// q3 = Q(0.75); {10, 20, 30, 40} gives 17.5 / 25 / 32.5. NaN values are ignored; no finite value gives
// all NaN.
BoxStats box_stats(std::vector<double> values);

}  // namespace moxlab::viewer
