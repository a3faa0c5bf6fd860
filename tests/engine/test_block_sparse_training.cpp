// MoHD's block-sparse products with autograd on the packed kernels (core/engine/block_sparse_training.h):
// hand values; forward and every gradient equal the torch form's in float64 on every ISA (selections with
// and without shared blocks, tokens using no routed block, a block nobody uses, row counts around a
// register tile and the row grain, widths with panel tails, blocks of whole panels and not); central finite differences of a nonlinear
// loss through both custom backwards; what they do not take is refused.
#include "tests/torch_catch.h"

#include "core/engine/block_sparse_training.h"
#include "tests/engine/finite_differences.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;
using moxlab::test::for_each_isa;

namespace {

// [M, N] active mask: the first `shared` blocks for every token, routed block i for token m where bit i of
// a random draw is set (p = 1/2), except blocks listed as unused.
torch::Tensor random_mask(std::int64_t M, int N, int shared, std::vector<int> unused = {}) {
  auto active = torch::rand({M, N}) < 0.5;
  active.narrow(1, 0, shared).fill_(true);
  for (int i : unused) active.select(1, i).fill_(false);
  return active;
}

}  // namespace

TEST_CASE("block-sparse training products: hand-computed forward and gradients", "[engine][mohd]") {
  // Two blocks of 16, block 0 shared: token 0 uses both, token 1 only block 0.
  auto active = torch::tensor({{true, true}, {true, false}});
  const auto s = BlockSelection::from_mask(active, 1, "grouped");
  REQUIRE(s.grouped);
  const auto x = torch::ones({2, 32}).requires_grad_();
  const auto w = torch::ones({1, 32}).requires_grad_();
  const auto y = engine::block_sparse_input_training(x, w, s);
  // Token 0 sums 32 ones, token 1 the 16 of its block (y is in row order: map back to tokens).
  CHECK(torch::equal(s.from_rows(y.detach()), torch::tensor({{32.0f}, {16.0f}})));
  y.sum().backward();
  auto dx = torch::ones({2, 32});
  dx[1].narrow(0, 16, 16).zero_();
  CHECK(torch::equal(x.grad(), dx));  // dX = W on the active blocks
  auto dw = torch::full({1, 32}, 2.0f);
  dw.narrow(1, 16, 16).fill_(1.0f);
  CHECK(torch::equal(w.grad(), dw));  // dW: block 0 from both tokens, block 1 from token 0

  // Output side, w [32, 1] of ones, h = (1, 2), scale (0.5, 3) per block for both tokens.
  const auto h = torch::tensor({{1.0f}, {2.0f}}).requires_grad_();
  const auto wo = torch::ones({32, 1}).requires_grad_();
  const auto scale = s.to_rows(torch::tensor({{0.5f, 3.0f}, {0.5f, 3.0f}})).requires_grad_();
  const auto hr = s.to_rows(h);
  const auto u = engine::block_sparse_output_training(hr, wo, s, scale);
  auto want = torch::zeros({2, 32});
  want[0].narrow(0, 0, 16).fill_(0.5f);
  want[0].narrow(0, 16, 16).fill_(3.0f);
  want[1].narrow(0, 0, 16).fill_(1.0f);  // token 1: 2 * 0.5 on block 0, nothing on block 1
  CHECK(torch::equal(s.from_rows(u.detach()), want));
  u.sum().backward();
  CHECK(torch::equal(h.grad(), torch::tensor({{16 * 0.5f + 16 * 3.0f}, {16 * 0.5f}})));
  auto dwo = torch::full({32, 1}, 0.5f * (1 + 2));
  dwo.narrow(0, 16, 16).fill_(3.0f * 1);
  CHECK(torch::equal(wo.grad(), dwo));
  CHECK(torch::equal(s.from_rows(scale.grad()), torch::tensor({{16.0f, 16.0f}, {32.0f, 0.0f}})));  // sum of u's block
}

TEST_CASE("block-sparse training products equal the torch form in float64 on every ISA", "[engine][mohd]") {
  struct Case {
    std::int64_t M;
    int N, shared;
    std::int64_t b, n;     // block width, the input side's outputs (and the output side's k)
    std::vector<int> unused;
    bool bias;
  };
  for (const Case& c : {Case{5, 4, 1, 16, 20, {}, true}, Case{70, 8, 3, 16, 45, {}, false}, Case{40, 2, 0, 32, 33, {}, true},
                        Case{100, 4, 2, 16, 16, {3}, false}, Case{9, 3, 1, 48, 7, {}, true}, Case{50, 8, 3, 24, 40, {}, true}, Case{33, 4, 1, 5, 17, {}, false}}) {
    INFO("M " << c.M << ", N " << c.N << ", shared " << c.shared << ", b " << c.b << ", n " << c.n);
    torch::manual_seed(static_cast<std::uint64_t>(c.M));
    const std::int64_t d = c.N * c.b;
    const auto s = BlockSelection::from_mask(random_mask(c.M, c.N, c.shared, c.unused), c.shared, "grouped");
    REQUIRE(s.grouped);
    const auto x = torch::randn({c.M, d}), w = torch::randn({c.n, d}) / std::sqrt(double(d)), b = torch::randn({c.n});
    const auto h = torch::randn({c.M, c.n}), wo = torch::randn({d, c.n}) / std::sqrt(double(c.n)), scale = torch::rand({c.M, c.N});
    const auto dy = torch::randn({c.M, c.n}), du = torch::randn({c.M, d});
    // The torch form in float64.
    auto xr = d64(x).requires_grad_(), wr = d64(w).requires_grad_(), br = d64(b).requires_grad_();
    const auto yr = block_sparse_input_linear_from_tokens(xr, wr, s, c.bias ? br : torch::Tensor());
    yr.backward(d64(dy));
    auto hr = d64(h).requires_grad_(), wor = d64(wo).requires_grad_(), sr = d64(scale).requires_grad_();
    const auto ur = block_sparse_output_linear(hr, wor, s, sr);
    ur.backward(d64(du));
    for_each_isa([&] {
      auto xp = x.clone().requires_grad_(), wp = w.clone().requires_grad_(), bp = b.clone().requires_grad_();
      const auto y = engine::block_sparse_input_training(xp, wp, s, c.bias ? bp : torch::Tensor());
      y.backward(dy);
      CHECK(close_to(y, yr, 1e-5, 1e-5));
      CHECK(close_to(xp.grad(), xr.grad(), 1e-5, 1e-5));
      CHECK(close_to(wp.grad(), wr.grad(), 1e-5, 1e-4));
      if (c.bias) CHECK(close_to(bp.grad(), br.grad(), 1e-5, 1e-4));
      auto hp = h.clone().requires_grad_(), wop = wo.clone().requires_grad_(), sp = scale.clone().requires_grad_();
      const auto u = engine::block_sparse_output_training(hp, wop, s, sp);
      u.backward(du);
      CHECK(close_to(u, ur, 1e-5, 1e-5));
      CHECK(close_to(hp.grad(), hr.grad(), 1e-5, 1e-5));
      CHECK(close_to(wop.grad(), wor.grad(), 1e-5, 1e-4));
      CHECK(close_to(sp.grad(), sr.grad(), 1e-5, 1e-4));
    });
  }
}

TEST_CASE("block-sparse training products: both custom backwards against central finite differences", "[engine][mohd]") {
  torch::manual_seed(5);
  const std::int64_t M = 11, N = 3, b = 16, d = N * b, n = 9;
  const auto s = BlockSelection::from_mask(random_mask(M, N, 1), 1, "grouped");
  const auto r = torch::randn({M, n}), q = torch::randn({M, d});
  const auto input_loss = [&](const std::vector<torch::Tensor>& in) {
    return (torch::tanh(engine::block_sparse_input_training(in[0], in[1], s, in[2])) * r).sum();
  };
  CHECK(test::check_finite_differences(input_loss, {torch::randn({M, d}), torch::randn({n, d}) * 0.2, torch::randn({n})}, 5, 1e-2, 2e-3) > 50);
  const auto output_loss = [&](const std::vector<torch::Tensor>& in) {
    return (torch::tanh(engine::block_sparse_output_training(in[0], in[1], s, in[2])) * q).sum();
  };
  CHECK(test::check_finite_differences(output_loss, {torch::randn({M, n}), torch::randn({d, n}) * 0.3, torch::rand({M, N})}, 5, 1e-2, 2e-3) > 50);
}

TEST_CASE("block-sparse training products: what they do not take is refused, and callers can tell", "[engine][mohd]") {
  const auto s = BlockSelection::from_mask(random_mask(6, 4, 1), 1, "grouped");
  CHECK(engine::block_sparse_training_applies(s, torch::zeros({5, 64}), 64));
  CHECK_FALSE(engine::block_sparse_training_applies(s, torch::zeros({5, 64}, torch::kDouble), 64));
  const auto per_block = BlockSelection::from_mask(random_mask(6, 4, 1), 1, "per_block");
  CHECK_FALSE(engine::block_sparse_training_applies(per_block, torch::zeros({5, 64}), 64));
  CHECK_THROWS(engine::block_sparse_input_training(torch::zeros({7, 64}), torch::zeros({5, 64}), s));  // 7 tokens, 6 selected
  CHECK_THROWS(engine::block_sparse_input_training(torch::zeros({6, 64}), torch::zeros({5, 48}), s));  // widths differ
  CHECK_THROWS(engine::block_sparse_output_training(torch::zeros({6, 5}), torch::zeros({64, 5}), s, torch::zeros({6, 3})));  // scale [6, 3]
}
