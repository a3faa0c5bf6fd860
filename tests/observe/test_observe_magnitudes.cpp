// core/observe, one tap at a time: magnitude profile (MoHD Fig. 3 left), sparsity (Eq. 2, Fig. 3
// middle), magnitude median/mean (Fig. 4) and per-token dimension ranks, each on a hand-made matrix
// whose expected values are worked out in the comments.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "core/common/error.h"
#include "core/observe/dim_ranks.h"
#include "core/observe/magnitude_profile.h"
#include "core/observe/magnitude_summary.h"
#include "core/observe/sparsity.h"

using namespace moxlab;

namespace {
// 3 tokens x 4 dims. x^2 per token:
//   t0: [4, 1, 0, 1]  (sum 6)
//   t1: [0, 9, 1, 0]  (sum 10)
//   t2: [1, 1, 1, 1]  (sum 4)
const std::vector<float> kX = {2, -1, 0, 1,  //
                               0, 3, -1, 0,  //
                               1, 1, 1, -1};
ActivationMatrix matrix(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) { return {v.data(), rows, cols}; }
}  // namespace

TEST_CASE("observe: magnitude profile sorts pooled and per-token magnitudes with cumulative shares", "[observe]") {
  const MagnitudeProfile p = magnitude_profile(matrix(kX, 3, 4));
  // Per-dim means of x^2: d0 5/3, d1 11/3, d2 2/3, d3 2/3 (total 20/3), sorted descending.
  REQUIRE(p.pooled_sorted.size() == 4);
  CHECK(p.pooled_sorted[0] == Approx(11.0 / 3));
  CHECK(p.pooled_sorted[1] == Approx(5.0 / 3));
  CHECK(p.pooled_sorted[3] == Approx(2.0 / 3));
  // Cumulative share: 11/20, 16/20, 18/20, 20/20.
  CHECK(p.pooled_cumshare[0] == Approx(0.55));
  CHECK(p.pooled_cumshare[1] == Approx(0.80));
  CHECK(p.pooled_cumshare[2] == Approx(0.90));
  CHECK(p.pooled_cumshare[3] == Approx(1.0));
  // Per token, sorted: t0 [4,1,1,0]/6, t1 [9,1,0,0]/10, t2 [1,1,1,1]/4; cumulative shares
  //   t0 [2/3, 5/6, 1, 1], t1 [0.9, 1, 1, 1], t2 [0.25, 0.5, 0.75, 1]; their mean:
  CHECK(p.token_cumshare[0] == Approx((2.0 / 3 + 0.9 + 0.25) / 3));  // 0.60556
  CHECK(p.token_cumshare[1] == Approx((5.0 / 6 + 1.0 + 0.5) / 3));   // 0.77778
  CHECK(p.token_cumshare[2] == Approx((1.0 + 1.0 + 0.75) / 3));      // 0.91667
  CHECK(p.token_cumshare[3] == Approx(1.0));
  // Mean of the sorted per-token magnitudes: [(4+9+1)/3, (1+1+1)/3, (1+0+1)/3, (0+0+1)/3].
  CHECK(p.token_sorted[0] == Approx(14.0 / 3));
  CHECK(p.token_sorted[1] == Approx(1.0));
  CHECK(p.token_sorted[2] == Approx(2.0 / 3));
  CHECK(p.token_sorted[3] == Approx(1.0 / 3));
  CHECK(p.zero_tokens == 0);
  // Top 50% = ceil(4/2) = 2 dims.
  CHECK(top_half(4) == 2);
  CHECK(top_half(5) == 3);
  CHECK(top_k_share(p.pooled_cumshare, top_half(4)) == Approx(0.80));
  CHECK(top_k_share(p.token_cumshare, top_half(4)) == Approx(7.0 / 9));
  CHECK(top_k_share(p.pooled_cumshare, 0) == 0.0);
  CHECK(top_k_share(p.pooled_cumshare, 99) == Approx(1.0));
}

TEST_CASE("observe: an all-zero token has no share and is left out of the per-token curve", "[observe]") {
  // t0 = [0, 0] (no magnitude), t1 = [1, 0]: the per-token curve is t1's alone, [1, 1];
  // pooled means [0.5, 0] give shares [1, 1].
  const std::vector<float> v = {0, 0, 1, 0};
  const MagnitudeProfile p = magnitude_profile(matrix(v, 2, 2));
  CHECK(p.zero_tokens == 1);
  CHECK(p.token_cumshare[0] == Approx(1.0));
  CHECK(p.pooled_sorted[0] == Approx(0.5));
  CHECK(p.pooled_cumshare[0] == Approx(1.0));
  // No magnitude at all: shares are undefined (NaN), not 0.
  const std::vector<float> z = {0, 0};
  CHECK(std::isnan(magnitude_profile(matrix(z, 1, 2)).pooled_cumshare[0]));
}

TEST_CASE("observe: default top-k list scales the paper's 1000 of 4096", "[observe]") {
  // d = 4096: d/8 = 512, d*1000/4096 = 1000, d/4 = 1024.
  CHECK(default_top_k(4096) == std::vector<std::int64_t>{512, 1000, 1024});
  // d = 64: 8, 15.625 -> 16, 16 (repeat dropped).
  CHECK(default_top_k(64) == std::vector<std::int64_t>{8, 16});
  // d = 4: 0.5 -> 1, 1, 0.98 -> 1.
  CHECK(default_top_k(4) == std::vector<std::int64_t>{1});
}

TEST_CASE("observe: sparsity counts magnitudes strictly below eps (Eq. 2)", "[observe]") {
  const ActivationMatrix x = matrix(kX, 3, 4);
  // eps = 1: x^2 < 1 in t0 {d2}, t1 {d0, d3}, t2 {} -> (1/4 + 2/4 + 0) / 3 = 0.25 (x^2 = 1 is not below).
  CHECK(sparsity(x, 1.0) == Approx(0.25));
  // eps = 1.5: t0 3 dims, t1 3 dims (0, 1, 0), t2 4 dims -> 10/12.
  CHECK(sparsity(x, 1.5) == Approx(10.0 / 12));
  // Curve over a grid, one pass: eps 0.5 -> 3/12, 1 -> 3/12, 1.5 -> 10/12, 9 -> 11/12 (9 itself is not
  // below 9), 10 -> 12/12.
  const std::vector<double> c = sparsity_curve(x, {0.5, 1.0, 1.5, 9.0, 10.0});
  CHECK(c[0] == Approx(0.25));
  CHECK(c[1] == Approx(0.25));
  CHECK(c[2] == Approx(10.0 / 12));
  CHECK(c[3] == Approx(11.0 / 12));
  CHECK(c[4] == Approx(1.0));
  const std::vector<double> g = log_eps_grid();
  REQUIRE(g.size() == 33);
  CHECK(g.front() == Approx(1e-6));
  CHECK(g[4] == Approx(1e-5));  // 4 points per decade
  CHECK(g.back() == 1e2);
  CHECK_THROWS_AS(sparsity_curve(x, {1.0, 0.5}), Error);
}

TEST_CASE("observe: magnitude median is exact for odd and even counts", "[observe]") {
  // x = [3, -1, 2]: x^2 = [9, 1, 4]; median 4, mean 14/3.
  const std::vector<float> odd = {3, -1, 2};
  const MagnitudeSummary a = magnitude_summary(matrix(odd, 1, 3));
  CHECK(a.median == Approx(4.0));
  CHECK(a.mean == Approx(14.0 / 3));
  // 2 x 2, x^2 = [16, 1, 9, 4]: sorted 1, 4, 9, 16 -> median (4 + 9) / 2 = 6.5, mean 7.5.
  const std::vector<float> even = {4, 1, -3, 2};
  const MagnitudeSummary b = magnitude_summary(matrix(even, 2, 2));
  CHECK(b.median == Approx(6.5));
  CHECK(b.mean == Approx(7.5));
  CHECK(b.elements == 4);
}

TEST_CASE("observe: dimension ranks order by magnitude with ties to the lower index", "[observe]") {
  // |x| = [0.5, 2, 2, 0]: d1 and d2 tie at 2 -> d1 rank 0, d2 rank 1, d0 rank 2, d3 rank 3.
  const std::vector<float> v = {0.5f, -2, 2, 0};
  const DimRanks r = rank_dimensions(matrix(v, 1, 4));
  CHECK(std::vector<std::int32_t>(r.row(0), r.row(0) + 4) == std::vector<std::int32_t>{2, 0, 1, 3});
  // K = ceil(p/100 * d).
  CHECK(top_count(20, 4096) == 820);   // 819.2
  CHECK(top_count(80, 4096) == 3277);  // 3276.8
  CHECK(top_count(50, 64) == 32);
  CHECK(top_count(30, 10) == 3);
  CHECK(top_count(1, 6) == 1);
  CHECK(top_count(100, 7) == 7);
  CHECK_THROWS_AS(top_count(0, 7), Error);
}

TEST_CASE("observe: the Gaussian reference share matches its closed form and a sampled vector", "[observe]") {
  // Top half: t = 0.67449 (P(|x| > t) = 0.5), phi(t) = 0.31777, share = 2 * 0.67449 * 0.31777 + 0.5 = 0.92867.
  CHECK(gaussian_top_share(0.5) == Approx(0.92867).epsilon(1e-4));
  // Top quarter: t = 1.15035, phi(t) = 0.20584, share = 2 * 1.15035 * 0.20585 + 0.25 = 0.72361.
  CHECK(gaussian_top_share(0.25) == Approx(0.72361).epsilon(1e-4));
  CHECK(gaussian_top_share(0.0) == 0.0);
  CHECK(gaussian_top_share(1.0) == 1.0);
  // The per-token curve of i.i.d. Gaussian rows lands on it (d = 4096: finite-d bias below 1e-3).
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  const std::int64_t n = 64, d = 4096;
  std::vector<float> data(static_cast<std::size_t>(n * d));
  for (auto& v : data) v = normal(rng);
  const MagnitudeProfile p = magnitude_profile(ActivationMatrix{data.data(), n, d});
  CHECK(top_k_share(p.token_cumshare, d / 2) == Approx(gaussian_top_share(0.5)).margin(3e-3));
  CHECK(top_k_share(p.token_cumshare, d / 4) == Approx(gaussian_top_share(0.25)).margin(3e-3));
}
