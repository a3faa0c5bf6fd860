// core/observe/routing_permutation: the spread's null under domain labels permuted across whole windows,
// against hand-enumerated relabellings, and its place in the routing file and results.
#include <catch2/catch.hpp>

#include <vector>

#include "core/common/error.h"
#include "core/observe/router_domains.h"
#include "core/observe/routing_permutation.h"
#include "core/store/tensor_log.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

TEST_CASE("routing permutation: two windows per domain, the partition found by 1 of 3 relabellings", "[observe][routing]") {
  // 4 windows of 2 tokens, N = 2 (sub-dim 0 shared). Domain 0 (windows 0, 1) always takes sub-dim 1,
  // domain 1 (windows 2, 3) never: observed spread 1. Of the 6 ways to give two windows each domain,
  // 2 split {0, 1} from {2, 3} (spread 1); the other 4 mix them (fractions 1/2 and 1/2, spread 0).
  // So P(spread >= 1) = 1/3 and the 95th percentile is 1.
  const std::vector<float> active = {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0};
  const std::vector<std::int32_t> domain = {0, 0, 0, 0, 1, 1, 1, 1}, window = {0, 0, 1, 1, 2, 2, 3, 3};
  const SpreadNull s = spread_permutation_null(active, 8, 2, domain, window, 3000);
  CHECK(s.observed == Approx(1.0));
  CHECK(s.windows == 4);
  CHECK(s.permutations == 3000);
  CHECK(s.q95 == Approx(1.0));
  CHECK(s.p > 0.30);  // (1 + ~1000) / 3001, binomial sd 0.009
  CHECK(s.p < 0.37);
  const SpreadNull again = spread_permutation_null(active, 8, 2, domain, window, 3000);
  CHECK(again.p == s.p);  // deterministic for one seed
}

TEST_CASE("routing permutation: routing that ignores the domain gives spread 0 and p 1", "[observe][routing]") {
  const std::vector<float> active = {1, 0, 0, 1, 1, 0, 0, 1};
  const SpreadNull s = spread_permutation_null(active, 4, 2, {0, 0, 1, 1}, {5, 5, 9, 9}, 200);
  CHECK(s.observed == Approx(0.0));
  CHECK(s.q95 == Approx(0.0));
  CHECK(s.p == Approx(1.0));
}

TEST_CASE("routing permutation: a window across two domains or mismatched sizes is a one-line error", "[observe][routing]") {
  const std::vector<float> active = {1, 0, 0, 1};
  CHECK_THROWS_WITH(spread_permutation_null(active, 2, 2, {0, 1}, {3, 3}, 10), Contains("window 3 holds tokens of two domains"));
  CHECK_THROWS_WITH(spread_permutation_null(active, 2, 2, {0, 1}, {3}, 10), Contains("disagree in size"));
  CHECK_THROWS_WITH(spread_permutation_null(active, 2, 2, {0, 1}, {3, 4}, 0), Contains("at least one permutation"));
}

TEST_CASE("routing permutation: a capture with windows carries the null into the routing file and results", "[observe][routing]") {
  // 5 tokens, N = 3 (sub-dim 0 shared); windows 0 (code: tokens 0, 1), 1 (books: 2, 3), 2 (code: 4).
  //   active sub-dims 1/2: token 0: 1 0, token 1: 0 1, tokens 2, 3: 1 0, token 4: 0 1.
  // Which window is books decides the spread: window 1 (as captured) 2/3; window 0: books 1/2, 1/2,
  // code 2/3, 1/3 -> 1/6; window 2: books 0, 1, code 3/4, 1/4 -> 3/4. Draws >= 2/3 with probability
  // 2/3 (p ~ 0.667), the 95th percentile 3/4.
  moxlab::testing::ScratchDir dir("routing_null");
  const std::string cap = dir.file("cap.h5"), out = dir.file("cap.routing.h5");
  const std::vector<float> probs(15, 0.3f), active = {1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 1};
  {
    TensorLogWriter w(cap);
    w.write("/probes/blocks.0.attn.router.probs", probs.data(), {5, 3});
    w.write("/probes/blocks.0.attn.router.topk", active.data(), {5, 3});
    w.write("/domain", std::vector<std::int32_t>{0, 0, 1, 1, 0});
    w.write("/window", std::vector<std::int32_t>{0, 0, 1, 1, 2});
    w.write_strings("/domain_names", std::vector<std::string>{"code", "books"});
    w.finish();
  }
  const RoutingReport rep = observe_routing(cap, out);
  REQUIRE(rep.routers.size() == 1);
  const SpreadNull& null = rep.routers[0].null;
  CHECK(null.observed == Approx(rep.routers[0].spread()));
  CHECK(null.observed == Approx(2.0 / 3));
  CHECK(null.q95 == Approx(0.75));
  CHECK(null.p > 0.62);
  CHECK(null.p < 0.71);
  CHECK(null.permutations == kSpreadPermutations);
  int found = 0;
  for (const auto& r : rep.results) {
    if (r.key == "routing/spread_p/blocks.0.attn") found += r.value == Approx(null.p) ? 1 : 0;
    if (r.key == "routing/spread_null95/blocks.0.attn") found += r.value == Approx(0.75) ? 1 : 0;
  }
  CHECK(found == 2);
  TensorLogReader in(out);
  CHECK(in.attr_double("/routing/blocks.0.attn/selected", "spread_p") == Approx(null.p));
  CHECK(in.attr_double("/routing/blocks.0.attn/selected", "spread_null_q95") == Approx(0.75));
}
