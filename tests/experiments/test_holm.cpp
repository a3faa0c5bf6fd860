// Holm's step-down adjustment (experiments/report/holm.h) on hand-computed families: the multipliers
// m, m - 1, ..., 1 by rank, the running maximum that keeps the order, the cap at 1, ties, the input order
// kept, and values outside [0, 1] refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/common/error.h"
#include "experiments/report/holm.h"

using namespace moxlab;

TEST_CASE("Holm: hand-computed adjustments", "[report]") {
  // Sorted 0.01, 0.03, 0.04 get x3, x2, x1: 0.03, 0.06, 0.04 -> the running maximum makes the last 0.06.
  const auto a = holm_adjusted({0.01, 0.04, 0.03});
  REQUIRE(a.size() == 3);
  CHECK(a[0] == Approx(0.03));
  CHECK(a[1] == Approx(0.06));
  CHECK(a[2] == Approx(0.06));
  // No running maximum needed: 0.001 x4, 0.01 x3, 0.02 x2, 0.5 x1.
  const auto b = holm_adjusted({0.5, 0.02, 0.001, 0.01});
  CHECK(b[0] == Approx(0.5));
  CHECK(b[1] == Approx(0.04));
  CHECK(b[2] == Approx(0.004));
  CHECK(b[3] == Approx(0.03));
  // Capped at 1; ties take the same value; one test is its own adjustment; an empty family is empty.
  const auto c = holm_adjusted({0.6, 0.6});
  CHECK(c[0] == 1.0);
  CHECK(c[1] == 1.0);
  const auto d = holm_adjusted({0.02, 0.02, 0.02});
  CHECK(d[0] == Approx(0.06));
  CHECK(d[1] == Approx(0.06));
  CHECK(d[2] == Approx(0.06));
  CHECK(holm_adjusted({0.037}) == std::vector<double>{0.037});
  CHECK(holm_adjusted({}).empty());
}

TEST_CASE("Holm: p-values outside [0, 1] are refused", "[report]") {
  CHECK_THROWS_AS(holm_adjusted({0.1, 1.5}), Error);
  CHECK_THROWS_AS(holm_adjusted({-0.01}), Error);
  CHECK_THROWS_AS(holm_adjusted({std::numeric_limits<double>::quiet_NaN()}), Error);
}
