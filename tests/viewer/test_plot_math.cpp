// viewer/model: axis ticks, min/max downsampling, EMA smoothing, mean +- stderr bands and colours,
// against hand-computed values.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "viewer/model/colormap.h"
#include "viewer/model/curve_stats.h"
#include "viewer/model/downsample.h"
#include "viewer/model/ticks.h"

using namespace moxlab;
using namespace moxlab::viewer;

namespace {
std::vector<double> values(const std::vector<Tick>& ticks) {
  std::vector<double> v;
  for (const auto& t : ticks) v.push_back(t.value);
  return v;
}
std::vector<std::string> labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> v;
  for (const auto& t : ticks) v.push_back(t.label);
  return v;
}
}  // namespace

TEST_CASE("linear ticks use 1/2/5 x 10^k steps inside the range", "[viewer][ticks]") {
  // range 0..1 with at most 6 ticks: raw step 0.2 -> 0.2
  CHECK(values(linear_ticks(0, 1, 6)) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  CHECK(labels(linear_ticks(0, 1, 6)) == std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1.0"});
  // 23..187, 5 ticks: raw 41 -> 50: 50, 100, 150
  CHECK(values(linear_ticks(23, 187, 5)) == std::vector<double>{50, 100, 150});
  CHECK(labels(linear_ticks(-0.03, 0.03, 4)) == std::vector<std::string>{"-0.02", "0", "0.02"});
  CHECK(values(linear_ticks(3, 3, 5)) == std::vector<double>{3});
  CHECK(linear_ticks(0, std::numeric_limits<double>::quiet_NaN(), 5).empty());
}

TEST_CASE("log ticks are powers of ten, with 2 and 5 on short ranges", "[viewer][ticks]") {
  CHECK(values(log_ticks(1, 1000, 6)) == std::vector<double>{1, 10, 100, 1000});
  CHECK(values(log_ticks(1, 100, 9)) == std::vector<double>{1, 2, 5, 10, 20, 50, 100});
  CHECK(labels(log_ticks(1e-6, 1e-4, 3)) == std::vector<std::string>{"1e-06", "1e-05", "0.0001"});
  // 12 decades, at most 4 ticks: every 3rd decade
  CHECK(values(log_ticks(1, 1e12, 4)) == std::vector<double>{1, 1e3, 1e6, 1e9, 1e12});
  CHECK(log_ticks(0, 10, 5).empty());  // no log axis through 0
}

TEST_CASE("min/max downsampling keeps every bucket's extremes and the edges", "[viewer][downsample]") {
  // 1000 points, a single spike at i = 500: it must survive 10 buckets.
  std::vector<double> x(1000), y(1000, 0.0);
  for (int i = 0; i < 1000; ++i) x[i] = i;
  y[500] = 7;
  y[501] = -3;
  const XY d = downsample_minmax(x.data(), y.data(), x.size(), 0, 999, 10);
  CHECK(d.x.size() <= 4 * 11 + 2);
  CHECK(*std::max_element(d.y.begin(), d.y.end()) == 7);
  CHECK(*std::min_element(d.y.begin(), d.y.end()) == -3);
  CHECK(d.x.front() == 0);
  CHECK(d.x.back() == 999);
  CHECK(std::is_sorted(d.x.begin(), d.x.end()));
  // Visible range 100..200 keeps one point either side and nothing further out.
  const XY v = downsample_minmax(x.data(), y.data(), x.size(), 100, 200, 5);
  CHECK(v.x.front() == 99);
  CHECK(v.x.back() == 201);
  // Short series pass through unchanged, NaNs dropped.
  std::vector<double> sx = {0, 1, 2}, sy = {1, std::nan(""), 3};
  const XY s = downsample_minmax(sx.data(), sy.data(), 3, 0, 2, 100);
  CHECK(s.x == std::vector<double>{0, 2});
  CHECK(s.y == std::vector<double>{1, 3});
}

TEST_CASE("EMA smoothing is bias-corrected like TensorBoard's", "[viewer][curves]") {
  // w = 0.5: s1 = 0.5*2 = 1 -> /0.5 = 2; s2 = 0.5*1 + 0.5*4 = 2.5 -> /0.75 = 3.333..; NaN passes through.
  const auto s = ema_smooth({2, 4, std::nan(""), 4}, 0.5);
  CHECK(s[0] == Approx(2));
  CHECK(s[1] == Approx(2.5 / 0.75));
  CHECK(std::isnan(s[2]));
  CHECK(s[3] == Approx((0.5 * 2.5 + 0.5 * 4) / 0.875));
  CHECK(ema_smooth({1, 5, 9}, 0.0) == std::vector<double>{1, 5, 9});
}

TEST_CASE("mean band: mean and standard error across runs per step", "[viewer][curves]") {
  // step 10: {1, 3} -> mean 2, sd sqrt(2), se 1; step 20: {5} only (n = 1, se 0); a re-logged step
  // keeps the last value.
  std::vector<std::vector<MetricPoint>> curves = {{{10, 1}, {20, 5}}, {{10, 9}, {10, 3}}};
  const CurveBand b = mean_band(curves);
  CHECK(b.step == std::vector<double>{10, 20});
  CHECK(b.mean == std::vector<double>{2, 5});
  CHECK(b.std_err[0] == Approx(1.0));
  CHECK(b.std_err[1] == 0);
  CHECK(b.n == std::vector<int>{2, 1});
}

TEST_CASE("colour maps: end points and packing", "[viewer][colour]") {
  CHECK(pack_rgba({1, 0, 0}) == 0xFF0000FFu);  // IM_COL32 order: A B G R
  CHECK(pack_rgba({0, 0, 1}, 0.0f) == 0x00FF0000u);
  const Rgb lo = viridis(0), hi = viridis(1), clamped = viridis(2);
  CHECK(lo.r == Approx(0.267f));
  CHECK(hi.g == Approx(0.906f));
  CHECK(clamped.g == hi.g);
  CHECK(blue_to_red(0).b > blue_to_red(0).r);
  CHECK(blue_to_red(1).r > blue_to_red(1).b);
  CHECK(palette(0).r == palette(10).r);
}
