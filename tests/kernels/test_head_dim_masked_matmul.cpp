// ToMoE's W_O product over each row's kept head dims (kernels/fused/head_dim_masked_matmul.h): by hand and
// against the masked dense product on every ISA variant.
#include "kernels/fused/head_dim_masked_matmul.h"
#include "kernels/fused/packed_matmul.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;
using moxlab::test::for_each_isa;

TEST_CASE("The head-dim masked product multiplies each row's kept dims of every head, by hand", "[kernels]") {
  // H = 2 heads of hd = 2: x's columns are (h0 d0, h0 d1, h1 d0, h1 d1). W [3, 4]:
  const auto w = torch::tensor({{1.0f, 2.0f, 3.0f, 4.0f}, {0.0f, 1.0f, 0.0f, 1.0f}, {2.0f, 0.0f, 0.0f, 1.0f}});
  const auto packed = pack_head_dim_major(w, 2);
  // Columns in (dim, head) order: d0 h0 = column 0, d0 h1 = column 2, d1 h0 = 1, d1 h1 = 3.
  CHECK(packed[0][1][0].item<float>() == 3.0f);
  CHECK(packed[0][2][0].item<float>() == 2.0f);
  const auto x = torch::tensor({{1.0f, 2.0f, 3.0f, 4.0f}, {1.0f, -1.0f, 2.0f, 5.0f}, {1.0f, 1.0f, 1.0f, 1.0f}, {1.0f, 1.0f, 1.0f, 1.0f}});
  const auto mask = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {0.0f, 0.0f}, {1.0f, 1.0f}});
  // Row 0 keeps d0: 1 W[:, 0] + 3 W[:, 2] = [10, 0, 2]. Row 1 keeps d1: -1 W[:, 1] + 5 W[:, 3] = [18, 4, 5].
  // Row 2 keeps none: zeros. Row 3 keeps both: W's row sums [10, 2, 3].
  const auto expected = torch::tensor({{10.0f, 0.0f, 2.0f}, {18.0f, 4.0f, 5.0f}, {0.0f, 0.0f, 0.0f}, {10.0f, 2.0f, 3.0f}});
  for_each_isa([&] {
    auto y = torch::full({4, 3}, -7.0f);
    head_dim_masked_matmul(row_map(x), 4, packed_weight(packed, 3), 2, mask.data_ptr<float>(), 2, row_map(y));
    CHECK(torch::equal(y, expected));
  });
}

TEST_CASE("The head-dim masked product equals the masked dense product at every tile, panel and chunk edge", "[kernels]") {
  // x is nonzero in the dims a row drops (they must not be read); rows keep from none to all dims; outputs
  // and masks have strides past their width (nothing written there); 300 and 600 rows cross the kernel's
  // 256-row chunks, 1-9 rows its tiles of 8 (AVX-512) and 6; n covers whole panels, groups of 3 and tails.
  torch::manual_seed(11);
  for (auto [m, heads, hd, n] : std::vector<std::tuple<int, int, int, int>>{
           {1, 8, 48, 384}, {7, 8, 48, 40}, {9, 4, 6, 17}, {13, 3, 5, 33}, {300, 8, 48, 384}, {600, 2, 64, 48}, {70, 1, 7, 5}, {33, 16, 8, 80}}) {
    INFO("m " << m << " heads " << heads << " hd " << hd << " n " << n);
    const auto x = torch::randn({m, heads * hd}), w = torch::randn({n, heads * hd});
    auto mask_full = (torch::rand({m, hd + 2}) < torch::rand({m, 1})).to(torch::kFloat);
    mask_full[0].fill_(1.0f);
    if (m > 1) mask_full[1].zero_();
    const auto mask = mask_full.narrow(1, 0, hd);
    const auto masked = (x.view({m, heads, hd}) * mask.view({m, 1, hd})).view({m, heads * hd});
    const auto expected = d64(masked).mm(d64(w).t());
    const auto pw = packed_weight(pack_head_dim_major(w, heads), n);
    for_each_isa([&] {
      auto out = torch::full({m, n + 3}, 123.0f);
      head_dim_masked_matmul(row_map(x), m, pw, heads, mask_full.data_ptr<float>(), hd + 2, row_map(out.narrow(1, 0, n)));
      CHECK(close_to(d64(out.narrow(1, 0, n)), expected, 1e-4, 1e-4));
      CHECK(torch::all(out.narrow(1, n, 3) == 123.0f).item<bool>());
    });
  }
}

TEST_CASE("The head-dim masked product refuses weights that are not whole heads", "[kernels]") {
  const auto w = torch::randn({20, 8});
  auto x = torch::randn({2, 8}), y = torch::empty({2, 20});
  CHECK_THROWS(pack_head_dim_major(w, 3));  // 8 input columns are not whole heads of 3
  const auto mask = torch::ones({2, 4});
  CHECK_THROWS(head_dim_masked_matmul(row_map(x), 2, packed_weight(pack_weight(w), 20), 3, mask.data_ptr<float>(), 4, row_map(y)));
}
