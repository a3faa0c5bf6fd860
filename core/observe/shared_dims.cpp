#include "core/observe/shared_dims.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/common/error.h"

namespace moxlab {

SharedDims shared_dims(const DimRanks& r, const std::vector<std::int32_t>& run_length, int max_run) {
  require(max_run >= 2, "shared dims: max run length must be >= 2");
  require(static_cast<std::int64_t>(run_length.size()) == r.rows, "shared dims: run lengths do not match the rows");
  const std::int64_t d = r.cols;
  const int nk = max_run - 1, np = 100;
  SharedDims s;
  s.max_run = max_run;
  s.dims = d;
  for (int k = 2; k <= max_run; ++k) s.k.push_back(k);
  for (int p = 1; p <= np; ++p) s.percent.push_back(p);
  s.runs.assign(nk, 0);

  // hist[k-2][m] = number of (run of length k, dim) pairs whose max rank over the run is m.
  std::vector<std::int64_t> hist(static_cast<std::size_t>(nk * d), 0);
  std::vector<std::int32_t> run_max(static_cast<std::size_t>(d));
  for (std::int64_t t = 0; t < r.rows; ++t) {
    const int longest = std::min(max_run, run_length[t]);
    if (longest < 2) continue;
    std::copy(r.row(t), r.row(t) + d, run_max.begin());
    for (int k = 2; k <= longest; ++k) {
      const std::int32_t* next = r.row(t + k - 1);
      std::int64_t* h = hist.data() + (k - 2) * d;
      for (std::int64_t i = 0; i < d; ++i) ++h[run_max[i] = std::max(run_max[i], next[i])];
      ++s.runs[k - 2];
    }
  }

  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.counts.assign(static_cast<std::size_t>(nk * np), nan);
  s.chance.resize(static_cast<std::size_t>(nk * np));
  for (int ki = 0; ki < nk; ++ki) {
    // shared[K] = number of (run, dim) pairs with max rank < K = hist[0] + ... + hist[K-1].
    std::vector<std::int64_t> shared(static_cast<std::size_t>(d + 1), 0);
    for (std::int64_t m = 0; m < d; ++m) shared[m + 1] = shared[m] + hist[ki * d + m];
    for (int pi = 0; pi < np; ++pi) {
      const std::int64_t K = top_count(s.percent[pi], d);
      if (s.runs[ki] > 0) s.counts[ki * np + pi] = static_cast<double>(shared[K]) / static_cast<double>(s.runs[ki]);
      s.chance[ki * np + pi] = static_cast<double>(d) * std::pow(static_cast<double>(K) / static_cast<double>(d), s.k[ki]);
    }
  }
  return s;
}

namespace {
std::size_t cell(const SharedDims& s, int k, int percent) {
  const int np = static_cast<int>(s.percent.size());
  require(k >= 2 && k <= s.max_run && percent >= 1 && percent <= np, "shared dims: (k, p) outside the grid");
  return static_cast<std::size_t>((k - 2) * np + (percent - 1));
}
}  // namespace

double SharedDims::count(int k, int p) const { return counts[cell(*this, k, p)]; }
double SharedDims::chance_at(int k, int p) const { return chance[cell(*this, k, p)]; }

}  // namespace moxlab
