// Paired differences over seeds (experiments/report/paired_difference.h): Student's t quantiles against
// closed forms (1 and 2 degrees of freedom) and published values, hand-computed intervals at n = 2 and 3,
// the verdict on each side of zero and across it, the two-sided p against the closed-form t CDFs, and
// what is refused.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/common/error.h"
#include "experiments/report/paired_difference.h"

using namespace moxlab;

TEST_CASE("t quantiles: closed forms at 1 and 2 degrees of freedom, published values beyond", "[report]") {
  const double pi = std::acos(-1.0);
  CHECK(t_quantile_975(1) == Approx(std::tan(0.475 * pi)).epsilon(1e-9));                     // Cauchy: 12.7062
  CHECK(t_quantile_975(2) == Approx(0.95 / std::sqrt(2 * 0.975 * 0.025)).epsilon(1e-9));        // 4.30265
  CHECK(t_quantile_975(4) == Approx(2.776445).epsilon(1e-6));
  CHECK(t_quantile_975(9) == Approx(2.262157).epsilon(1e-6));
  CHECK(t_quantile_975(30) == Approx(2.042272).epsilon(1e-6));
  CHECK(t_quantile_975(100000) == Approx(1.959984).epsilon(1e-5));  // the normal's 1.959964 in the limit
  CHECK_THROWS_AS(t_quantile_975(0), Error);
}

TEST_CASE("paired difference: hand-computed intervals at n = 2 and n = 3, and the verdicts", "[report]") {
  // n = 2: d = (1, 3), mean 2, sd sqrt 2, half-width t(1) sqrt 2 / sqrt 2 = 12.7062: across zero.
  const auto two = paired_difference({3, 5}, {2, 2});
  CHECK(two.n == 2);
  CHECK(two.mean == Approx(2));
  CHECK(two.sd == Approx(std::sqrt(2.0)));
  CHECK(two.low == Approx(2 - 12.7062047).epsilon(1e-6));
  CHECK(two.high == Approx(2 + 12.7062047).epsilon(1e-6));
  CHECK(verdict(two, +1) == Verdict::inconclusive);
  // n = 3: d = (-0.5, -0.4, -0.3), mean -0.4, sd 0.1, half-width 4.302653 * 0.1 / sqrt 3 = 0.248413.
  const auto three = paired_difference({1.0, 1.2, 1.1}, {1.5, 1.6, 1.4});
  CHECK(three.mean == Approx(-0.4));
  CHECK(three.sd == Approx(0.1));
  CHECK(three.low == Approx(-0.648413).epsilon(1e-5));
  CHECK(three.high == Approx(-0.151587).epsilon(1e-5));
  CHECK(verdict(three, -1) == Verdict::reproduces);  // the paper: the method lowers the loss
  CHECK(verdict(three, +1) == Verdict::opposite);
  CHECK(verdict_name(verdict(three, -1)) == "reproduces");
  CHECK(verdict_name(Verdict::inconclusive) == "inconclusive");
}

TEST_CASE("paired difference: the two-sided p against closed forms at 1 and 2 degrees of freedom", "[report]") {
  const double pi = std::acos(-1.0);
  // dof 1 (Cauchy): p = 1 - (2 / pi) atan|t|. d = (1, 3): t = 2 / (sqrt 2 / sqrt 2) = 2, p = 0.295167.
  CHECK(two_sided_p(paired_difference({3, 5}, {2, 2})) == Approx(1 - 2 / pi * std::atan(2.0)).epsilon(1e-9));
  // dof 2: p = 1 - |t| / sqrt(2 + t^2). d = (-0.5, -0.4, -0.3): t = -0.4 / (0.1 / sqrt 3) = -6.928, p = 0.020204.
  const auto three = paired_difference({1.0, 1.2, 1.1}, {1.5, 1.6, 1.4});
  const double t = 0.4 / (0.1 / std::sqrt(3.0));
  CHECK(two_sided_p(three) == Approx(1 - t / std::sqrt(2 + t * t)).epsilon(1e-9));
  CHECK(two_sided_p(three) == Approx(0.020204).epsilon(1e-4));
  // p < 0.05 exactly when the 95% interval excludes zero: t = t(0.975, 2) gives p = 0.05.
  PairedDifference edge;
  edge.n = 3;
  edge.sd = 1;
  edge.mean = t_quantile_975(2) / std::sqrt(3.0);
  CHECK(two_sided_p(edge) == Approx(0.05).epsilon(1e-9));
  // No spread: certain for a nonzero mean, no evidence for a zero one.
  CHECK(two_sided_p(paired_difference({2, 3}, {1, 2})) == 0.0);
  CHECK(two_sided_p(paired_difference({1, 2}, {1, 2})) == 1.0);
  CHECK_THROWS_AS(two_sided_p(PairedDifference{}), Error);
}

TEST_CASE("paired difference: unequal seed counts, one seed and a direction of 0 are refused", "[report]") {
  CHECK_THROWS_AS(paired_difference({1, 2, 3}, {1, 2}), Error);
  CHECK_THROWS_AS(paired_difference({1}, {2}), Error);
  CHECK_THROWS_AS(verdict(paired_difference({1, 2}, {0, 0}), 0), Error);
}
