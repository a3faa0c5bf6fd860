// The packed-weight products (kernels/fused/packed_matmul.h) against float64 references on every ISA
// variant: every row count of a register tile, odd and even panel counts and every panel tail, input
// ranges, row blocks, bias, accumulation, gathered and scattered rows and the SwiGLU packing.
#include <ATen/Parallel.h>

#include "kernels/fused/packed_matmul.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;
using moxlab::test::for_each_isa;

TEST_CASE("Packed products equal x W^T by hand and at every tile and panel edge", "[kernels]") {
  // By hand: x = [[1, 2], [3, -1]], W = [[1, 0], [2, 1], [0, -1]]: x W^T = [[1, 4, -2], [3, 5, 1]]; + bias
  // [10, 20, 30] = [[11, 24, 28], [13, 25, 31]].
  const auto x = torch::tensor({{1.0f, 2.0f}, {3.0f, -1.0f}});
  const auto w = torch::tensor({{1.0f, 0.0f}, {2.0f, 1.0f}, {0.0f, -1.0f}});
  const auto bias = torch::tensor({10.0f, 20.0f, 30.0f});
  const auto packed = pack_weight(w);
  CHECK(packed.sizes() == torch::IntArrayRef({1, 2, 16}));
  CHECK(packed[0][1][1].item<float>() == 1.0f);  // W[1][1] at k = 1, column 1
  CHECK(packed[0][0][5].item<float>() == 0.0f);  // padding
  for_each_isa([&] {
    auto y = torch::full({2, 3}, -7.0f);
    ProductOptions opt;
    opt.bias = bias.data_ptr<float>();
    packed_matmul(row_map(x), 2, packed_weight(packed, 3), row_map(y), opt);
    CHECK(torch::equal(y, torch::tensor({{11.0f, 24.0f, 28.0f}, {13.0f, 25.0f, 31.0f}})));
  });
  torch::manual_seed(5);
  for (auto [m, k, n] : std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {5, 7, 16}, {6, 16, 17}, {13, 33, 40}, {97, 64, 8}, {200, 48, 48}, {385, 384, 16}, {17, 20, 33}, {9, 5, 64}}) {
    INFO("m " << m << " k " << k << " n " << n);
    const auto xs = torch::randn({m, k}), ws = torch::randn({n, k}), b = torch::randn({n});
    const auto pw = pack_weight(ws);
    for_each_isa([&] {
      auto y = torch::empty({m, n});
      ProductOptions opt;
      opt.bias = b.data_ptr<float>();
      packed_matmul(row_map(xs), m, packed_weight(pw, n), row_map(y), opt);
      CHECK(close_to(d64(y), d64(xs).mm(d64(ws).t()) + d64(b), 1e-4, 1e-4));
    });
  }
}

TEST_CASE("Packed products with row blocks read each register tile's union of its rows' blocks", "[kernels]") {
  // K = 60 in 6 blocks of 10; each row's bit mask of blocks, x zero in its other blocks (the contract):
  // every tile, whatever rows it holds (8, 6 or fewer at the edges), gives x W^T; rows with no block at
  // all give the bias.
  torch::manual_seed(8);
  const int m = 29, k = 60, n = 35, width = 10;
  const auto w = torch::randn({n, k}), bias = torch::randn({n});
  const auto pw = packed_weight(pack_weight(w), n);
  std::vector<std::uint64_t> blocks(m);
  auto x = torch::randn({m, k});
  for (int r = 0; r < m; ++r) {
    blocks[r] = r == 4 ? 0 : (r * 37 + 11) % 64;  // row 4 uses no block
    for (int i = 0; i < 6; ++i)
      if (!((blocks[r] >> i) & 1)) x[r].narrow(0, i * width, width).zero_();
  }
  for_each_isa([&] {
    auto y = torch::empty({m, n});
    ProductOptions opt;
    opt.bias = bias.data_ptr<float>();
    opt.row_blocks = blocks.data();
    opt.block_width = width;
    packed_matmul(row_map(x), m, pw, row_map(y), opt);
    CHECK(close_to(d64(y), d64(x).mm(d64(w).t()) + d64(bias), 1e-4, 1e-4));
  });
  ProductOptions both;
  both.ranges = {{0, 10}};
  both.row_blocks = blocks.data();
  both.block_width = width;
  auto y = torch::empty({m, n});
  CHECK_THROWS(packed_matmul(row_map(x), m, pw, row_map(y), both));  // ranges or row blocks, not both
}

TEST_CASE("Packed products read input ranges, accumulate, and gather and scatter rows", "[kernels]") {
  torch::manual_seed(6);
  const int m = 23, k = 50, n = 21;
  const auto x = torch::randn({m, k}), w = torch::randn({n, k});
  const auto pw = packed_weight(pack_weight(w), n);
  // Ranges [3, 10) and [40, 50): the product of those columns of x and W only.
  const auto keep = torch::zeros({k});
  keep.narrow(0, 3, 7).fill_(1);
  keep.narrow(0, 40, 10).fill_(1);
  const auto ref_ranges = d64(x * keep).mm(d64(w).t());
  // Rows gathered from a wider matrix in another order and scattered to a third.
  const auto wide = torch::randn({40, k + 6});
  std::vector<std::int64_t> from, to;
  for (int r = 0; r < m; ++r) from.push_back((r * 7) % 40), to.push_back(m - 1 - r);
  const auto gathered = wide.narrow(1, 2, k).index_select(0, torch::tensor(from));
  for_each_isa([&] {
    auto y = torch::empty({m, n});
    ProductOptions opt;
    opt.ranges = {{3, 7}, {40, 10}};
    packed_matmul(row_map(x), m, pw, row_map(y), opt);
    CHECK(close_to(d64(y), ref_ranges, 1e-4, 1e-4));
    // Accumulating adds the full product to what is there.
    packed_matmul(row_map(x), m, pw, row_map(y), ProductOptions{{}, nullptr, true});
    CHECK(close_to(d64(y), ref_ranges + d64(x).mm(d64(w).t()), 1e-4, 1e-4));
    // Gather and scatter: out row to[r] = wide row from[r] (columns 2 .. k + 1) W^T.
    auto out = torch::zeros({m, n + 3});
    packed_matmul(row_map(wide.narrow(1, 2, k), from.data()), m, pw, row_map(out.narrow(1, 1, n), to.data()));
    const auto expect = d64(gathered).mm(d64(w).t()).flip(0);
    CHECK(close_to(d64(out.narrow(1, 1, n)), expect, 1e-4, 1e-4));
    CHECK(out.narrow(1, 0, 1).abs().max().item<float>() == 0.0f);  // outside the mapped columns untouched
  });
}

TEST_CASE("A SwiGLU packing gives SiLU(x G^T) * (x U^T) in one product", "[kernels]") {
  // By hand: x = [1, 1], gate rows [2, 0] and [-1, -2], up rows [1, 1] and [0, 4]: gate products 2 and -3,
  // up products 2 and 4: SiLU(2) * 2 = 2 * 2 / (1 + e^-2) = 3.523188, SiLU(-3) * 4 = -12 / (1 + e^3) = -0.569113.
  const auto x = torch::tensor({{1.0f, 1.0f}});
  const auto gate = torch::tensor({{2.0f, 0.0f}, {-1.0f, -2.0f}}), up = torch::tensor({{1.0f, 1.0f}, {0.0f, 4.0f}});
  const auto packed = pack_swiglu_weight(gate, up);
  CHECK(packed.sizes() == torch::IntArrayRef({1, 2, 16}));
  CHECK(packed[0][1][9].item<float>() == 4.0f);  // up row 1, k = 1, in the up half
  for_each_isa([&] {
    auto y = torch::empty({1, 2});
    packed_matmul(row_map(x), 1, packed_weight(packed, 2, true), row_map(y));
    CHECK(close_to(y, torch::tensor({{3.523188f, -0.569113f}}), 1e-5, 1e-5));
  });
  torch::manual_seed(8);
  for (int width : {8, 13, 64}) {
    INFO("width " << width);
    const auto xs = torch::randn({31, 40}), g = torch::randn({width, 40}) * 0.5, u = torch::randn({width, 40});
    const auto pw = packed_weight(pack_swiglu_weight(g, u), width, true);
    const auto gd = d64(xs).mm(d64(g).t()), ud = d64(xs).mm(d64(u).t());
    for_each_isa([&] {
      auto y = torch::empty({31, width});
      packed_matmul(row_map(xs), 31, pw, row_map(y));
      CHECK(close_to(d64(y), gd * torch::sigmoid(gd) * ud, 1e-4, 1e-4));
    });
  }
}

TEST_CASE("packed_linear splits rows across threads, or the panels where rows are few", "[kernels]") {
  // 1, 4 and 32 rows take the panel split (the output head at the prompt's last positions, a decode step),
  // 33 and 100 rows the row split; 200 columns (13 panels: a ragged last share and a padded last panel).
  torch::manual_seed(11);
  const auto w = torch::randn({200, 24}), b = torch::randn({200});
  const auto pw = packed_weight(pack_weight(w), 200);
  const int before = at::get_num_threads();
  at::set_num_threads(2);
  torch::NoGradGuard ng;
  for (int m : {1, 4, 32, 33, 100}) {
    INFO("rows " << m);
    const auto x = torch::randn({m, 24});
    CHECK(close_to(d64(packed_linear(x, pw, b)), d64(x).mm(d64(w).t()) + d64(b), 1e-4, 1e-4));
    CHECK(close_to(d64(packed_linear(x.view({1, m, 24}), pw)).view({m, 200}), d64(x).mm(d64(w).t()), 1e-4, 1e-4));
  }
  at::set_num_threads(before);
}

TEST_CASE("parallel_packed_matmul equals one packed_matmul, split by rows or by panels, with every option", "[kernels]") {
  // Few rows (1, 5, 32) split the panels, more (33, 100) the rows; rows gathered and scattered through an
  // index, a SwiGLU packing (8-column panels), bias, row blocks (their pointer follows the row split).
  torch::manual_seed(12);
  const int before = at::get_num_threads();
  at::set_num_threads(2);
  const auto w = torch::randn({200, 40}), up = torch::randn({200, 40}), b = torch::randn({200});
  const auto linear = packed_weight(pack_weight(w), 200), swiglu = packed_weight(pack_swiglu_weight(w, up), 200, true);
  for (int m : {1, 5, 32, 33, 100}) {
    INFO("rows " << m);
    const auto x = torch::randn({m + 7, 40});
    std::vector<std::int64_t> index(static_cast<std::size_t>(m));
    for (int r = 0; r < m; ++r) index[static_cast<std::size_t>(r)] = (r * 7 + 3) % (m + 7);  // a permutation: 7 divides none of m
    std::vector<std::uint64_t> blocks(static_cast<std::size_t>(m));
    for (int r = 0; r < m; ++r) blocks[static_cast<std::size_t>(r)] = 1u << (r / 16 % 4);  // one of 4 blocks of 10, by runs of 16
    auto xm = x.clone();
    for (int r = 0; r < m; ++r) {
      const auto bits = blocks[static_cast<std::size_t>(r)];
      for (int i = 0; i < 4; ++i)
        if (!(bits >> i & 1)) xm[index[static_cast<std::size_t>(r)]].narrow(0, i * 10, 10).zero_();
    }
    for (bool use_swiglu : {false, true}) {
      const auto& pw = use_swiglu ? swiglu : linear;
      ProductOptions opt;
      if (!use_swiglu) opt.bias = b.data_ptr<float>();
      opt.row_blocks = blocks.data();
      opt.block_width = 10;
      auto expected = torch::full({m + 9, 200}, 5.0f), got = expected.clone();
      packed_matmul(row_map(xm, index.data()), m, pw, row_map(expected, index.data()), opt);
      parallel_packed_matmul(row_map(xm, index.data()), m, pw, row_map(got, index.data()), opt);
      CHECK(close_to(got, expected, 1e-5, 1e-5));
      CHECK(torch::equal(got.narrow(0, m + 7, 2), torch::full({2, 200}, 5.0f)));  // rows no index points at
    }
  }
  at::set_num_threads(before);
}

TEST_CASE("Packed products refuse what they cannot do", "[kernels]") {
  const auto w = torch::randn({20, 8});
  CHECK_THROWS(packed_weight(pack_weight(w), 40));                   // more columns than panels hold
  CHECK_THROWS(pack_weight(w.to(torch::kDouble)));                   // float32 only
  CHECK_THROWS(pack_swiglu_weight(w, torch::randn({21, 8})));        // gate and up differ
  auto x = torch::randn({2, 8}), y = torch::empty({2, 20});
  ProductOptions out_of_range;
  out_of_range.ranges = {{4, 5}};
  CHECK_THROWS(packed_matmul(row_map(x), 2, packed_weight(pack_weight(w), 20), row_map(y), out_of_range));
  ProductOptions bias;
  bias.bias = y.data_ptr<float>();
  CHECK_THROWS(packed_matmul(row_map(x), 2, packed_weight(pack_swiglu_weight(w, w), 20, true), row_map(y), bias));
}

