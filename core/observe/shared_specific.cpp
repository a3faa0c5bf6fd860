#include "core/observe/shared_specific.h"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

namespace moxlab {

namespace {
int popcount(std::int32_t b) { return static_cast<int>(std::bitset<32>(static_cast<std::uint32_t>(b)).count()); }

// Bit j of pattern[i] = dim i is among the K largest of token start + j.
void run_patterns(const DimRanks& r, std::int64_t start, int run_len, std::int64_t K, std::vector<std::int32_t>& pattern) {
  std::fill(pattern.begin(), pattern.end(), 0);
  for (int j = 0; j < run_len; ++j) {
    const std::int32_t* rank = r.row(start + j);
    for (std::int64_t i = 0; i < r.cols; ++i)
      if (rank[i] < K) pattern[i] |= 1 << j;
  }
}
}  // namespace

std::vector<std::int32_t> cluster_order(const std::vector<std::int32_t>& pattern,
                                        const std::vector<double>& mean_magnitude) {
  std::vector<std::int32_t> order(pattern.size());
  std::iota(order.begin(), order.end(), 0);
  // Sort key: (tokens high, descending) -- which puts high-in-all (popcount = run_len) first --,
  // then pattern value ascending, then mean magnitude descending, then index.
  auto key = [&](std::int32_t i) { return std::make_tuple(-popcount(pattern[i]), pattern[i], -mean_magnitude[i], i); };
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return key(a) < key(b); });
  return order;
}

SharedSpecific shared_specific(const ActivationMatrix& x, const DimRanks& r, const std::vector<std::int32_t>& run_length,
                               double top_percent, int run_len, std::int64_t example_row) {
  require_nonempty(x, "shared/specific dims");
  require(run_len >= 1 && run_len <= 16, "shared/specific dims: run length must be in [1, 16]");
  require(r.rows == x.rows && r.cols == x.cols && static_cast<std::int64_t>(run_length.size()) == x.rows,
          "shared/specific dims: ranks and run lengths do not match the activations");
  require(example_row < 0 || (example_row < x.rows && run_length[example_row] >= run_len),
          "shared/specific dims: row " + std::to_string(example_row) + " does not start a run of " +
              std::to_string(run_len) + " consecutive tokens");
  const std::int64_t d = x.cols;
  SharedSpecific s;
  s.run_len = run_len;
  s.top_percent = top_percent;
  s.dims = d;
  s.high = top_count(top_percent, d);
  const double q = static_cast<double>(s.high) / static_cast<double>(d);
  s.chance_all = static_cast<double>(d) * std::pow(q, run_len);
  s.chance_one_total = run_len * static_cast<double>(d) * q * std::pow(1 - q, run_len - 1);

  // Histogram of patterns over all runs.
  std::vector<std::int64_t> hist(std::size_t{1} << run_len, 0);
  std::vector<std::int32_t> pattern(static_cast<std::size_t>(d));
  for (std::int64_t t = 0; t < x.rows; ++t) {
    if (run_length[t] < run_len) continue;
    if (example_row < 0) example_row = t;
    run_patterns(r, t, run_len, s.high, pattern);
    for (std::int32_t b : pattern) ++hist[b];
    ++s.runs;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.pattern_counts.assign(hist.size(), nan);
  s.all_high = s.one_high_total = s.one_high_per_token = nan;
  if (s.runs == 0) return s;
  for (std::size_t b = 0; b < hist.size(); ++b) s.pattern_counts[b] = static_cast<double>(hist[b]) / static_cast<double>(s.runs);
  s.all_high = s.pattern_counts.back();
  s.one_high_total = 0;
  for (int j = 0; j < run_len; ++j) s.one_high_total += s.pattern_counts[std::size_t{1} << j];
  s.one_high_per_token = s.one_high_total / run_len;

  // The example run.
  s.example_row = example_row;
  s.pattern.resize(static_cast<std::size_t>(d));
  run_patterns(r, example_row, run_len, s.high, s.pattern);
  s.example_magnitude.resize(static_cast<std::size_t>(run_len * d));
  std::vector<double> mean(static_cast<std::size_t>(d), 0.0);
  for (int j = 0; j < run_len; ++j)
    for (std::int64_t i = 0; i < d; ++i) {
      const double m = x.magnitude(example_row + j, i);
      s.example_magnitude[j * d + i] = static_cast<float>(m);
      mean[i] += m / run_len;
    }
  s.order = cluster_order(s.pattern, mean);
  return s;
}

}  // namespace moxlab
