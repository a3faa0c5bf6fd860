// The packed-weight products (kernels/fused/packed_matmul.h) against float64 references, on the AVX-512
// and AVX2 kernels and the portable loop: every row count of a register tile, odd and even panel counts
// and every panel tail, input ranges,
// bias, accumulation, gathered and scattered rows and the SwiGLU packing; and the head-dim masked product
// (kernels/fused/head_dim_masked_matmul.h) on the same packings.
#include <cstdio>
#include <fstream>
#include <iterator>

#include "kernels/fused/head_dim_masked_matmul.h"
#include "kernels/fused/huge_pages.h"
#include "kernels/fused/packed_matmul.h"
#include "torch_catch.h"

using namespace moxlab;

namespace {

// Runs `check` once on each implementation this machine has.
template <class F>
void on_each_kernel(F check) {
  for (PackedIsa isa : {PackedIsa::avx512, PackedIsa::avx2, PackedIsa::portable}) {
    force_packed_isa(isa);  // one the CPU lacks runs the best it has
    INFO(packed_isa_name(packed_isa()));
    check();
  }
  force_packed_isa(PackedIsa::best);
}

torch::Tensor d64(const torch::Tensor& t) { return t.to(torch::kDouble); }

}  // namespace

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
  on_each_kernel([&] {
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
    on_each_kernel([&] {
      auto y = torch::empty({m, n});
      ProductOptions opt;
      opt.bias = b.data_ptr<float>();
      packed_matmul(row_map(xs), m, packed_weight(pw, n), row_map(y), opt);
      CHECK(torch::allclose(d64(y), d64(xs).mm(d64(ws).t()) + d64(b), 1e-4, 1e-4));
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
  on_each_kernel([&] {
    auto y = torch::empty({m, n});
    ProductOptions opt;
    opt.bias = bias.data_ptr<float>();
    opt.row_blocks = blocks.data();
    opt.block_width = width;
    packed_matmul(row_map(x), m, pw, row_map(y), opt);
    CHECK(torch::allclose(d64(y), d64(x).mm(d64(w).t()) + d64(bias), 1e-4, 1e-4));
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
  on_each_kernel([&] {
    auto y = torch::empty({m, n});
    ProductOptions opt;
    opt.ranges = {{3, 7}, {40, 10}};
    packed_matmul(row_map(x), m, pw, row_map(y), opt);
    CHECK(torch::allclose(d64(y), ref_ranges, 1e-4, 1e-4));
    // Accumulating adds the full product to what is there.
    packed_matmul(row_map(x), m, pw, row_map(y), ProductOptions{{}, nullptr, true});
    CHECK(torch::allclose(d64(y), ref_ranges + d64(x).mm(d64(w).t()), 1e-4, 1e-4));
    // Gather and scatter: out row to[r] = wide row from[r] (columns 2 .. k + 1) W^T.
    auto out = torch::zeros({m, n + 3});
    packed_matmul(row_map(wide.narrow(1, 2, k), from.data()), m, pw, row_map(out.narrow(1, 1, n), to.data()));
    const auto expect = d64(gathered).mm(d64(w).t()).flip(0);
    CHECK(torch::allclose(d64(out.narrow(1, 1, n)), expect, 1e-4, 1e-4));
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
  on_each_kernel([&] {
    auto y = torch::empty({1, 2});
    packed_matmul(row_map(x), 1, packed_weight(packed, 2, true), row_map(y));
    CHECK(torch::allclose(y, torch::tensor({{3.523188f, -0.569113f}}), 1e-5, 1e-5));
  });
  torch::manual_seed(8);
  for (int width : {8, 13, 64}) {
    INFO("width " << width);
    const auto xs = torch::randn({31, 40}), g = torch::randn({width, 40}) * 0.5, u = torch::randn({width, 40});
    const auto pw = packed_weight(pack_swiglu_weight(g, u), width, true);
    const auto gd = d64(xs).mm(d64(g).t()), ud = d64(xs).mm(d64(u).t());
    on_each_kernel([&] {
      auto y = torch::empty({31, width});
      packed_matmul(row_map(xs), 31, pw, row_map(y));
      CHECK(torch::allclose(d64(y), gd * torch::sigmoid(gd) * ud, 1e-4, 1e-4));
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
    CHECK(torch::allclose(d64(packed_linear(x, pw, b)), d64(x).mm(d64(w).t()) + d64(b), 1e-4, 1e-4));
    CHECK(torch::allclose(d64(packed_linear(x.view({1, m, 24}), pw)).view({m, 200}), d64(x).mm(d64(w).t()), 1e-4, 1e-4));
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
      CHECK(torch::allclose(got, expected, 1e-5, 1e-5));
      CHECK(torch::equal(got.narrow(0, m + 7, 2), torch::full({2, 200}, 5.0f)));  // rows no index points at
    }
  }
  at::set_num_threads(before);
}

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
  on_each_kernel([&] {
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
    on_each_kernel([&] {
      auto out = torch::full({m, n + 3}, 123.0f);
      head_dim_masked_matmul(row_map(x), m, pw, heads, mask_full.data_ptr<float>(), hd + 2, row_map(out.narrow(1, 0, n)));
      CHECK(torch::allclose(d64(out.narrow(1, 0, n)), expected, 1e-4, 1e-4));
      CHECK(torch::all(out.narrow(1, n, 3) == 123.0f).item<bool>());
    });
  }
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
  CHECK_THROWS(pack_head_dim_major(w, 3));  // 8 input columns are not whole heads of 3
  const auto mask = torch::ones({2, 4});
  CHECK_THROWS(head_dim_masked_matmul(row_map(x), 2, packed_weight(pack_weight(w), 20), 3, mask.data_ptr<float>(), 4, row_map(y)));
}

namespace {
// The /proc/self/smaps field `field` ("VmFlags", "AnonHugePages") of the mapping holding `address`.
std::string smaps_field(const void* address, const std::string& field) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin = 0, end = 0;
    char sep = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx%c", &begin, &end, &sep) == 3 && sep == ' ') {  // a mapping's first line
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  }
  return {};
}
}  // namespace

TEST_CASE("Packed weights live in huge-page chunks that their tensors keep mapped", "[kernels]") {
  // Values and shape kept, cache-line aligned; a small tensor stays in ordinary memory.
  const auto small = torch::randn({16, 16});
  const auto small_copy = copy_to_huge_pages(small);
  CHECK(torch::equal(small_copy, small));
  CHECK(small_copy.data_ptr() != small.data_ptr());
  // Two 40 MB tensors: each needs a chunk of its own (chunks are 32 MiB); the first chunk stays mapped
  // while its tensor lives, and goes when it is freed.
  const auto big = torch::randn({10 << 20});
  auto a = copy_to_huge_pages(big);
  const auto after_a = huge_page_chunks();
  CHECK(torch::equal(a, big));
  CHECK(reinterpret_cast<std::uintptr_t>(a.data_ptr()) % 64 == 0);
  auto b = copy_to_huge_pages(big.view({1024, -1}));
  CHECK(b.sizes() == torch::IntArrayRef({1024, 10 << 10}));
  CHECK(huge_page_chunks() == after_a + 1);
  CHECK(torch::equal(b.flatten(), big));
  // The chunk is advised for huge pages: "hg" among its VMA flags, whether or not the kernel could find
  // free 2 MiB pages for it this time (AnonHugePages, reported).
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string mode((std::istreambuf_iterator<char>(thp)), std::istreambuf_iterator<char>());
  if (mode.find("[never]") == std::string::npos && !mode.empty()) {
    const std::string flags = smaps_field(b.data_ptr(), "VmFlags");
    INFO("VmFlags:" << flags << "; AnonHugePages:" << smaps_field(b.data_ptr(), "AnonHugePages"));
    CHECK((" " + flags + " ").find(" hg ") != std::string::npos);
  } else {
    WARN("transparent huge pages are off here (" << mode << "): not checking the chunk's advice");
  }
  a = torch::Tensor();
  CHECK(huge_page_chunks() == after_a);
  CHECK(torch::equal(b.flatten(), big));
}
