// core/observe across neighbouring tokens: consecutive runs, dimensions shared by k consecutive
// tokens (MoHD Fig. 3 right) and shared versus token-specific dimensions over 5 tokens with the
// clustered heat-map order (Fig. 5), on hand-made matrices with known ranks.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "core/common/error.h"
#include "core/observe/consecutive_runs.h"
#include "core/observe/dim_ranks.h"
#include "core/observe/shared_dims.h"
#include "core/observe/shared_specific.h"

using namespace moxlab;

TEST_CASE("observe: consecutive runs break at window boundaries and position gaps", "[observe]") {
  CHECK(consecutive_run_lengths({0, 0, 0, 1, 1, 1, 1}, {0, 1, 2, 0, 1, 2, 3}) ==
        std::vector<std::int32_t>{3, 2, 1, 4, 3, 2, 1});
  CHECK(consecutive_run_lengths({0, 0, 0}, {0, 1, 3}) == std::vector<std::int32_t>{2, 1, 1});
  // A new window breaks the run even where the positions happen to continue.
  CHECK(consecutive_run_lengths({0, 0, 1, 1}, {0, 1, 2, 3}) == std::vector<std::int32_t>{2, 1, 2, 1});
  CHECK_THROWS_AS(consecutive_run_lengths({0, 0}, {0}), Error);
}

TEST_CASE("observe: shared dims count dims high in every token of k consecutive tokens", "[observe]") {
  // 6 tokens x 4 dims, x = 4 - rank, so the ranks (rank 0 = largest) are:
  //   row0 [0,1,2,3]  row1 [1,0,3,2]  row2 [0,2,1,3]  row3 [3,2,1,0]   (window 0, positions 0..3)
  //   row4 [0,1,2,3]  row5 [0,1,2,3]                                   (window 1, positions 4..5)
  // Window 1's positions continue window 0's, so only the window index separates rows 3 and 4.
  const std::vector<float> v = {4, 3, 2, 1, 3, 4, 1, 2, 4, 2, 3, 1, 1, 2, 3, 4, 4, 3, 2, 1, 4, 3, 2, 1};
  const ActivationMatrix x{v.data(), 6, 4};
  const DimRanks r = rank_dimensions(x);
  const auto len = consecutive_run_lengths({0, 0, 0, 0, 1, 1}, {0, 1, 2, 3, 4, 5});
  REQUIRE(len == std::vector<std::int32_t>{4, 3, 2, 1, 2, 1});
  const SharedDims s = shared_dims(r, len, 20);
  REQUIRE(s.k.size() == 19);
  REQUIRE(s.percent.size() == 100);
  // k = 2: runs (0,1) (1,2) (2,3) (4,5); (3,4) crosses the window boundary and is not a run.
  // Max ranks over each run: [1,1,3,3], [1,2,3,3], [3,2,1,3], [0,1,2,3].
  CHECK(s.runs[0] == 4);
  // p = 25% -> K = 1 (max rank < 1): 0, 0, 0, 1 -> 0.25
  CHECK(s.count(2, 25) == Approx(0.25));
  // p = 50% -> K = 2: 2 (d0, d1), 1 (d0), 1 (d2), 2 (d0, d1) -> 1.5
  CHECK(s.count(2, 50) == Approx(1.5));
  // p = 75% -> K = 3: 2, 2, 2, 3 -> 2.25 (with the boundary run (3,4), max [3,2,2,3], it would be 2.2)
  CHECK(s.count(2, 75) == Approx(2.25));
  CHECK(s.count(2, 100) == Approx(4.0));
  CHECK(s.count(2, 1) == Approx(0.25));  // 1% of 4 dims -> K = 1
  // k = 3: runs (0..2), (1..3); max ranks [1,2,3,3], [3,2,3,3].
  CHECK(s.runs[1] == 2);
  CHECK(s.count(3, 25) == Approx(0.0));
  CHECK(s.count(3, 50) == Approx(0.5));  // 1, 0
  CHECK(s.count(3, 75) == Approx(1.5));  // 2, 1
  // k = 4: run (0..3) only, max [3,2,3,3]: K = 3 -> 1 dim.
  CHECK(s.runs[2] == 1);
  CHECK(s.count(4, 75) == Approx(1.0));
  // No run of 5 tokens: NaN, not 0.
  CHECK(s.runs[3] == 0);
  CHECK(std::isnan(s.count(5, 50)));
  // Chance for independent tokens: d (K/d)^k = 4 * 0.5^2 = 1 at k = 2, p = 50; 4 * 0.75^3 at k = 3, p = 75.
  CHECK(s.chance_at(2, 50) == Approx(1.0));
  CHECK(s.chance_at(3, 75) == Approx(4 * 0.421875));
  CHECK_THROWS_AS(s.count(21, 50), Error);
}

namespace {
// 5 tokens x 6 dims (one window). Top 50% = 3 dims per token:
//   t0 {3,1,5}  t1 {3,1,4}  t2 {3,1,0}  t3 {3,1,2}  t4 {3,1,5}
// Patterns (bit j = high in token j): d3 = d1 = 31 (all five), d5 = 1 + 16 = 17, d4 = 2, d0 = 4, d2 = 8.
const std::vector<float> kFive = {0.1f, 2, 0.2f, 3, 0.3f, 1,     //
                                  0.1f, 2, 0.2f, 3, 1, 0.3f,     //
                                  1, 2, 0.2f, 3, 0.3f, 0.1f,     //
                                  0.1f, 2, 1, 3, 0.3f, 0.2f,     //
                                  0.1f, 2, 0.2f, 3, 0.3f, 1};
}  // namespace

TEST_CASE("observe: shared and token-specific dims over 5 tokens with the clustered order", "[observe]") {
  const ActivationMatrix x{kFive.data(), 5, 6};
  const DimRanks r = rank_dimensions(x);
  const auto len = consecutive_run_lengths({0, 0, 0, 0, 0}, {0, 1, 2, 3, 4});
  const SharedSpecific s = shared_specific(x, r, len, 50, 5);
  CHECK(s.high == 3);
  CHECK(s.runs == 1);
  CHECK(s.pattern == std::vector<std::int32_t>{4, 31, 8, 31, 2, 17});
  // Order: all-five group first (d3 before d1: mean x^2 9 > 4), then 2 tokens high (d5), then one
  // token high by pattern value: d4 (2), d0 (4), d2 (8).
  CHECK(s.order == std::vector<std::int32_t>{3, 1, 5, 4, 0, 2});
  CHECK(s.all_high == Approx(2.0));
  CHECK(s.one_high_total == Approx(3.0));  // d4, d0, d2
  CHECK(s.one_high_per_token == Approx(0.6));
  CHECK(s.pattern_counts[17] == Approx(1.0));
  CHECK(s.pattern_counts[0] == Approx(0.0));
  // Chance with q = 3/6: all 6 * 0.5^5 = 0.1875, exactly one 5 * 6 * 0.5 * 0.5^4 = 0.9375.
  CHECK(s.chance_all == Approx(0.1875));
  CHECK(s.chance_one_total == Approx(0.9375));
  // The example heat map holds x^2 in the original dim order: token 0, d3 = 9; token 2, d0 = 1.
  REQUIRE(s.example_magnitude.size() == 30);
  CHECK(s.example_magnitude[0 * 6 + 3] == Approx(9.0));
  CHECK(s.example_magnitude[2 * 6 + 0] == Approx(1.0));
  // Row 1 does not start a run of 5 consecutive tokens.
  CHECK_THROWS_WITH(shared_specific(x, r, len, 50, 5, 1), Catch::Matchers::Contains("row 1"));
  // A window too short for 5 tokens: no runs, NaN counts, no example.
  const auto broken = consecutive_run_lengths({0, 0, 0, 1, 1}, {0, 1, 2, 0, 1});
  const SharedSpecific none = shared_specific(x, r, broken, 50, 5);
  CHECK(none.runs == 0);
  CHECK(std::isnan(none.all_high));
  CHECK(none.example_row == -1);
  CHECK(none.order.empty());
}

TEST_CASE("observe: cluster order breaks ties by mean magnitude, then index", "[observe]") {
  // d2 is high in token 0 (pattern 1), d0 and d1 nowhere (pattern 0): d2 first, then d1 (mean 2) before d0 (1).
  CHECK(cluster_order({0, 0, 1}, {1.0, 2.0, 2.0}) == std::vector<std::int32_t>{2, 1, 0});
  // Equal pattern and magnitude: index order.
  CHECK(cluster_order({3, 3}, {1.0, 1.0}) == std::vector<std::int32_t>{0, 1});
}

TEST_CASE("observe: the all-five count agrees with shared dims at k = 5 on random data", "[observe]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  const std::int64_t n = 40, d = 32;
  std::vector<float> v(static_cast<std::size_t>(n * d));
  for (float& f : v) f = normal(rng);
  std::vector<std::int32_t> window(n), position(n);
  for (std::int64_t t = 0; t < n; ++t) {
    window[t] = static_cast<std::int32_t>(t / 16);  // windows of 16, 16, 8 tokens
    position[t] = static_cast<std::int32_t>(t % 16);
  }
  const ActivationMatrix x{v.data(), n, d};
  const DimRanks r = rank_dimensions(x);
  const auto len = consecutive_run_lengths(window, position);
  const SharedDims sd = shared_dims(r, len, 20);
  const SharedSpecific ss = shared_specific(x, r, len, 20, 5);
  CHECK(ss.runs == 12 + 12 + 4);
  CHECK(sd.runs[3] == ss.runs);
  CHECK(ss.all_high == Approx(sd.count(5, 20)));
  // Pattern counts cover every dim of every run.
  double total = 0;
  for (double c : ss.pattern_counts) total += c;
  CHECK(total == Approx(static_cast<double>(d)));
  // k = 16: one run in each 16-token window; k = 17 needs more than a window holds.
  CHECK(sd.runs[14] == 2);
  CHECK(sd.runs[15] == 0);
}
