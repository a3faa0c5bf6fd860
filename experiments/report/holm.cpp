#include "experiments/report/holm.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/common/error.h"

namespace moxlab {

std::vector<double> holm_adjusted(const std::vector<double>& p) {
  for (double v : p)
    if (!(v >= 0 && v <= 1)) throw Error("Holm adjustment: a p-value must lie in [0, 1], got " + std::to_string(v));
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0;  // the step-down maximum keeps the adjusted values in the order of the raw ones
  for (std::size_t rank = 0; rank < m; ++rank) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - rank) * p[order[rank]]));
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

}  // namespace moxlab
