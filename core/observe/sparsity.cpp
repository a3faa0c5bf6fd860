#include "core/observe/sparsity.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace moxlab {

double sparsity(const ActivationMatrix& x, double eps) { return sparsity_curve(x, {eps})[0]; }

std::vector<double> sparsity_curve(const ActivationMatrix& x, const std::vector<double>& eps_grid) {
  require_nonempty(x, "sparsity");
  require(std::is_sorted(eps_grid.begin(), eps_grid.end()), "sparsity: eps grid must be ascending");
  // below[j] counts the elements whose smallest threshold above them is eps_grid[j]; the elements
  // with x^2 < eps_grid[j] are then below[0] + ... + below[j].
  std::vector<std::int64_t> below(eps_grid.size() + 1, 0);
  for (std::int64_t t = 0; t < x.rows; ++t)
    for (std::int64_t i = 0; i < x.cols; ++i) {
      const double m = x.magnitude(t, i);
      ++below[std::upper_bound(eps_grid.begin(), eps_grid.end(), m) - eps_grid.begin()];
    }
  std::vector<double> out(eps_grid.size());
  const double total = static_cast<double>(x.rows) * static_cast<double>(x.cols);
  std::int64_t run = 0;
  for (std::size_t j = 0; j < eps_grid.size(); ++j) out[j] = static_cast<double>(run += below[j]) / total;
  return out;
}

std::vector<double> log_eps_grid(double lo, double hi, int n) {
  require(lo > 0 && hi > lo && n >= 2, "sparsity: eps grid needs 0 < lo < hi and n >= 2");
  std::vector<double> g(n);
  for (int j = 0; j < n; ++j) g[j] = lo * std::pow(hi / lo, static_cast<double>(j) / (n - 1));
  g.back() = hi;
  return g;
}

}  // namespace moxlab
