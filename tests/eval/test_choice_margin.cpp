// The zero-shot margin metric (core/eval/tasks/choice_margin.h) on hand-made audit rows: gold minus the
// best distractor, its mean and stderr, chance as the mean of 1 / choices, tasks without choices, and the
// at-chance test of an accuracy's 95% interval.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/eval/tasks/choice_margin.h"

using namespace moxlab;

namespace {
AuditRow row(std::vector<double> loglik, int gold) {
  AuditRow r;
  r.loglik = std::move(loglik);
  r.gold = gold;
  return r;
}
}  // namespace

TEST_CASE("choice margin: gold minus the best distractor, mean and stderr, chance", "[eval][margin]") {
  TaskResult t;
  // Margins: -1 - (-2) = 1; -3 - max(-1, -5) = -2; -0.5 - (-1.5) = 1 (two choices).
  t.audit = {row({-1, -2, -4}, 0), row({-1, -3, -5}, 1), row({-1.5, -0.5}, 1)};
  const auto m = choice_margin(t);
  REQUIRE(m);
  CHECK(m->n == 3);
  CHECK(m->margin == Approx(0.0));
  CHECK(m->margin_stderr == Approx(std::sqrt(3.0) / std::sqrt(3.0)));  // sd of (1, -2, 1) = sqrt 3
  CHECK(m->chance == Approx((1.0 / 3 + 1.0 / 3 + 0.5) / 3));

  TaskResult lambada;  // one continuation, no gold: no margin
  AuditRow last;
  last.loglik = {-2.0};
  lambada.audit = {last};
  CHECK_FALSE(choice_margin(lambada));
}

TEST_CASE("at chance: the accuracy's 95% interval contains chance", "[eval][margin]") {
  CHECK(at_chance({"acc", 0.27, 0.02, ""}, 0.25));        // 0.27 - 0.25 = 0.02 <= 1.96 * 0.02
  CHECK_FALSE(at_chance({"acc", 0.35, 0.02, ""}, 0.25));  // 0.10 > 0.0392
  CHECK(at_chance({"acc", 1.0, NAN, ""}, 0.5));           // one item: no interval, nothing shown
}
