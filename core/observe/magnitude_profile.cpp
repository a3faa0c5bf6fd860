#include "core/observe/magnitude_profile.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace moxlab {

namespace {
// out[j] = (v[0] + ... + v[j]) / sum(v) for v sorted descending; false (out untouched) when sum(v) = 0.
bool cumulative_share(const std::vector<double>& v, std::vector<double>& out) {
  double total = 0;
  for (double m : v) total += m;
  if (!(total > 0)) return false;
  double run = 0;
  for (std::size_t j = 0; j < v.size(); ++j) out[j] = (run += v[j]) / total;
  return true;
}
}  // namespace

MagnitudeProfile magnitude_profile(const ActivationMatrix& x) {
  require_nonempty(x, "magnitude profile");
  const auto d = static_cast<std::size_t>(x.cols);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  MagnitudeProfile p;
  std::vector<double> dim_sum(d, 0.0), sorted_sum(d, 0.0), share_sum(d, 0.0), m(d), share(d);
  std::int64_t shared_tokens = 0;
  for (std::int64_t t = 0; t < x.rows; ++t) {
    for (std::size_t i = 0; i < d; ++i) dim_sum[i] += (m[i] = x.magnitude(t, static_cast<std::int64_t>(i)));
    std::sort(m.begin(), m.end(), std::greater<double>());
    for (std::size_t j = 0; j < d; ++j) sorted_sum[j] += m[j];
    if (cumulative_share(m, share)) {
      for (std::size_t j = 0; j < d; ++j) share_sum[j] += share[j];
      ++shared_tokens;
    }
  }
  const double n = static_cast<double>(x.rows);
  p.zero_tokens = x.rows - shared_tokens;
  p.pooled_sorted.resize(d);
  std::transform(dim_sum.begin(), dim_sum.end(), p.pooled_sorted.begin(), [n](double s) { return s / n; });
  std::sort(p.pooled_sorted.begin(), p.pooled_sorted.end(), std::greater<double>());
  p.pooled_cumshare.assign(d, nan);
  cumulative_share(p.pooled_sorted, p.pooled_cumshare);
  p.token_sorted.resize(d);
  std::transform(sorted_sum.begin(), sorted_sum.end(), p.token_sorted.begin(), [n](double s) { return s / n; });
  p.token_cumshare.assign(d, nan);
  if (shared_tokens > 0)
    std::transform(share_sum.begin(), share_sum.end(), p.token_cumshare.begin(),
                   [shared_tokens](double s) { return s / static_cast<double>(shared_tokens); });
  return p;
}

double top_k_share(const std::vector<double>& cumshare, std::int64_t k) {
  if (k <= 0 || cumshare.empty()) return 0.0;
  const auto idx = std::min<std::size_t>(static_cast<std::size_t>(k), cumshare.size()) - 1;
  return cumshare[idx];
}

std::int64_t top_half(std::int64_t d) { return (d + 1) / 2; }

std::vector<std::int64_t> default_top_k(std::int64_t d) {
  std::vector<std::int64_t> ks;
  for (double k : {d / 8.0, d / 4.0, d * 1000.0 / 4096.0})
    ks.push_back(std::clamp<std::int64_t>(std::llround(k), 1, std::max<std::int64_t>(d, 1)));
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

double gaussian_top_share(double fraction) {
  if (fraction <= 0) return 0;
  if (fraction >= 1) return 1;
  // Solve P(|x| > t) = erfc(t / sqrt 2) = fraction for t by bisection (erfc is decreasing).
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erfc(mid / std::sqrt(2.0)) > fraction ? lo : hi) = mid;
  }
  const double t = 0.5 * (lo + hi);
  const double phi = std::exp(-0.5 * t * t) / std::sqrt(2.0 * M_PI);
  return 2.0 * t * phi + fraction;
}

}  // namespace moxlab
