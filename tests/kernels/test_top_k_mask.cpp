// The per-row top-k mask (kernels/sparse/top_k_mask.h) by hand and against topk / a stable sort, on every
// ISA variant (the counting pass for rows up to 64 wide, the sort past it).
#include <limits>

#include "kernels/sparse/top_k_mask.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::for_each_isa;

TEST_CASE("top_k_mask marks each row's k largest scores, ties to the lower index", "[kernels]") {
  for_each_isa([] {
    // By hand: row 0's top 2 of (0.1, 3, -1, 2) are positions 1 and 3; row 1's three equal 5s keep the first two.
    const auto hand = top_k_mask(torch::tensor({{0.1f, 3.0f, -1.0f, 2.0f}, {5.0f, 1.0f, 5.0f, 5.0f}}), 2);
    CHECK(torch::equal(hand, torch::tensor({{0.0f, 1.0f, 0.0f, 1.0f}, {1.0f, 0.0f, 1.0f, 0.0f}})));
    // Random scores (no ties) against topk + scatter, k from none to all, a 3-d layout.
    torch::manual_seed(8);
    const auto s = torch::randn({3, 70, 48});
    for (int k : {0, 1, 24, 47, 48}) {
      INFO("k " << k);
      const auto ref = torch::zeros_like(s).scatter(-1, std::get<1>(s.topk(k, -1)), 1.0);
      CHECK(torch::equal(top_k_mask(s, k), ref));
    }
    CHECK_THROWS(top_k_mask(s, 49));
    // Many ties (scores rounded to integers), widths with a tail past 8 and past the counting pass's 64,
    // and -inf scores: against a stable descending sort, which puts equal scores in index order.
    for (int n : {5, 37, 64, 300}) {
      auto tied = (torch::randn({40, n}) * 2).round();
      tied[0][0] = -std::numeric_limits<float>::infinity();
      for (int k : {1, n / 2, n - 1}) {
        INFO("n " << n << " k " << k);
        const auto order = std::get<1>(tied.sort(true, -1, true));
        const auto ref = torch::zeros_like(tied).scatter(-1, order.narrow(-1, 0, k), 1.0);
        CHECK(torch::equal(top_k_mask(tied, k), ref));
      }
    }
  });
}
