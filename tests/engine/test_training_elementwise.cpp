// RMSNorm, SwiGLU and RoPE in training on the fused kernels (core/engine/training_elementwise.h,
// kernels/fused/rms_norm.h, swiglu.h, rope.h): hand values; values and gradients equal the model's LibTorch
// formulas in float64 on every ISA (widths with vector tails, strided gate / up halves and q / k views,
// frozen weights); central finite differences; operands the forms do not take are handed back undefined.
#include "tests/torch_catch.h"

#include <cmath>

#include "core/engine/training_elementwise.h"
#include "core/model/rmsnorm.h"
#include "core/model/rope.h"
#include "tests/engine/finite_differences.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;

TEST_CASE("training RMSNorm: hand-computed value and gradients", "[engine]") {
  // x = (3, 4), w = (1, 2), eps 0: r = 1 / sqrt(12.5); y = (3r, 8r). With dy = (1, 0): g = w dy = (1, 0),
  // mean(g x) = 1.5, dx = r g - x r^3 1.5, dw = dy x r = (3r, 0).
  const double r = 1.0 / std::sqrt(12.5);
  auto x = torch::tensor({{3.0f, 4.0f}}).requires_grad_();
  auto w = torch::tensor({1.0f, 2.0f}).requires_grad_();
  const auto y = engine::rms_norm_training(x, w, 0.0);
  CHECK(close_to(y, torch::tensor({{3 * r, 8 * r}}), 1e-6, 1e-7));
  y.backward(torch::tensor({{1.0f, 0.0f}}));
  CHECK(close_to(x.grad(), torch::tensor({{r - 3 * r * r * r * 1.5, -4 * r * r * r * 1.5}}), 1e-5, 1e-7));
  CHECK(close_to(w.grad(), torch::tensor({3 * r, 0.0}), 1e-6, 1e-7));
}

TEST_CASE("training SwiGLU: hand-computed value and gradients", "[engine]") {
  // g = (0, ln 3), u = (2, 2): sigmoid = (1/2, 3/4), a = g sigmoid(g) u = (0, 1.5 ln 3). With da = 1:
  // du = SiLU(g) = (0, 0.75 ln 3), dg = u s (1 + g (1 - s)) = (1, 1.5 (1 + ln 3 / 4)).
  const double l3 = std::log(3.0);
  auto g = torch::tensor({0.0, l3}, torch::kFloat).requires_grad_();
  auto u = torch::tensor({2.0f, 2.0f}).requires_grad_();
  const auto a = engine::swiglu_training(g, u);
  CHECK(close_to(a, torch::tensor({0.0, 1.5 * l3}), 1e-6, 1e-7));
  a.sum().backward();
  CHECK(close_to(u.grad(), torch::tensor({0.0, 0.75 * l3}), 1e-6, 1e-7));
  CHECK(close_to(g.grad(), torch::tensor({1.0, 1.5 * (1 + l3 / 4)}), 1e-6, 1e-7));
}

TEST_CASE("training RMSNorm and SwiGLU equal LibTorch's formulas in float64 on every ISA", "[engine]") {
  for (const std::int64_t d : {1, 7, 16, 37, 384}) {
    INFO("width " << d);
    torch::manual_seed(static_cast<std::uint64_t>(d));
    const auto x = torch::randn({3, 70, d}) * 2;  // 210 rows: more than one thread's share of the dw sums
    const auto w = torch::randn({d});
    const auto dy = torch::randn({3, 70, d});
    auto xr = d64(x).requires_grad_(), wr = d64(w).requires_grad_();
    rms_norm(xr, wr, 1e-5).backward(d64(dy));
    // gate and up as the two halves of one product's output: rows of one stride, not contiguous
    const auto gate_up = torch::randn({210, 2 * d}) * 3;
    auto gr = d64(gate_up.narrow(1, 0, d)).requires_grad_(), ur = d64(gate_up.narrow(1, d, d)).requires_grad_();
    const auto want_a = torch::silu(gr) * ur;
    want_a.backward(d64(dy.view({210, d})));
    test::for_each_isa([&] {
      auto xf = x.clone().requires_grad_(), wf = w.clone().requires_grad_();
      const auto y = engine::rms_norm_training(xf, wf, 1e-5);
      CHECK(close_to(y, rms_norm(d64(x), d64(w), 1e-5), 1e-5, 1e-6));
      y.backward(dy);
      CHECK(close_to(xf.grad(), xr.grad(), 1e-4, 1e-5));
      CHECK(close_to(wf.grad(), wr.grad(), 1e-4, 1e-4));
      auto gu = gate_up.clone().requires_grad_();
      const auto a = engine::swiglu_training(gu.narrow(1, 0, d), gu.narrow(1, d, d));
      CHECK(close_to(a, want_a, 1e-5, 1e-6));
      a.backward(dy.view({210, d}));
      CHECK(close_to(gu.grad().narrow(1, 0, d), gr.grad(), 1e-4, 1e-6));
      CHECK(close_to(gu.grad().narrow(1, d, d), ur.grad(), 1e-4, 1e-6));
    });
  }
}

TEST_CASE("training RMSNorm and SwiGLU: custom backwards against central finite differences", "[engine]") {
  torch::manual_seed(5);
  const auto c = torch::randn({4, 9});
  const auto norm_loss = [&](const std::vector<torch::Tensor>& in) {
    return (torch::tanh(engine::rms_norm_training(in[0], in[1], 1e-5)) * c).sum();
  };
  CHECK(test::check_finite_differences(norm_loss, {torch::randn({4, 9}), torch::randn({9})}, 1, 1e-2, 3e-3) == 45);
  const auto swiglu_loss = [&](const std::vector<torch::Tensor>& in) {
    return (torch::tanh(engine::swiglu_training(in[0], in[1])) * c).sum();
  };
  CHECK(test::check_finite_differences(swiglu_loss, {torch::randn({4, 9}) * 2, torch::randn({4, 9})}, 1, 1e-2, 3e-3) == 72);
}

TEST_CASE("training RMSNorm and SwiGLU: a frozen weight gets no gradient, other operands are handed back", "[engine]") {
  const auto x = torch::randn({5, 8}).requires_grad_();
  const auto frozen = torch::ones({8});  // ToMoE's conversion: the dense weights take no gradient
  engine::rms_norm_training(x, frozen, 1e-5).sum().backward();
  CHECK(x.grad().defined());
  CHECK_FALSE(frozen.grad().defined());
  CHECK_FALSE(engine::rms_norm_training(x.to(torch::kDouble), frozen.to(torch::kDouble), 1e-5).defined());
  CHECK_FALSE(engine::rms_norm_training(x, torch::ones({7}), 1e-5).defined());
  CHECK_FALSE(engine::swiglu_training(x, torch::ones({5, 7})).defined());
  CHECK_FALSE(engine::swiglu_training(x.to(torch::kDouble), x.to(torch::kDouble)).defined());
}

TEST_CASE("training RoPE: hand-computed rotation and its gradient", "[engine]") {
  // One pair (1, 2) at position 1 with angle a = pi / 2 (cos 0, sin 1) -> (-2, 1); the gradient of
  // y . (1, 0) with respect to x is the rotation by -a of (1, 0): (cos a, -sin a) = (0, -1).
  const auto cos = torch::tensor({{1.0f}, {0.0f}}), sin = torch::tensor({{0.0f}, {1.0f}});
  auto x = torch::tensor({1.0f, 2.0f}).view({1, 1, 1, 2}).requires_grad_();
  const auto y = engine::rope_training(x, cos, sin, 1);
  CHECK(close_to(y.flatten(), torch::tensor({-2.0f, 1.0f}), 1e-6, 1e-7));
  y.backward(torch::tensor({1.0f, 0.0f}).view({1, 1, 1, 2}));
  CHECK(close_to(x.grad().flatten(), torch::tensor({0.0f, -1.0f}), 1e-6, 1e-7));
}

TEST_CASE("training RoPE equals Rope::apply in float64 on every ISA, on views of a Q/K/V product", "[engine]") {
  const Rope rope(16, 40, 10000.0);
  torch::manual_seed(11);
  const auto qkv = torch::randn({2, 9, 5, 16});  // heads 0-2 are q, 3-4 k: views with a head stride of 16 and a row stride of 80
  const auto dy = torch::randn({2, 9, 3, 16});
  auto xr = d64(qkv).requires_grad_();
  const auto want = rope.apply(xr.narrow(2, 0, 3), 4);
  want.backward(d64(dy));
  test::for_each_isa([&] {
    auto x = qkv.clone().requires_grad_();
    const auto y = engine::rope_training(x.narrow(2, 0, 3), rope.cos(), rope.sin(), 4);
    REQUIRE(y.defined());
    CHECK(close_to(y, want, 1e-5, 1e-6));
    y.backward(dy);
    CHECK(close_to(x.grad(), xr.grad(), 1e-5, 1e-6));
  });
  CHECK_FALSE(engine::rope_training(qkv, rope.cos(), rope.sin(), 32).defined());  // past the table: Rope::apply reports it
  CHECK_FALSE(engine::rope_training(qkv.to(torch::kDouble), rope.cos(), rope.sin(), 0).defined());
}

TEST_CASE("training RoPE: the custom backward against central finite differences", "[engine]") {
  const Rope rope(8, 16, 100.0);
  torch::manual_seed(6);
  const auto c = torch::randn({1, 3, 2, 8});
  const auto loss = [&](const std::vector<torch::Tensor>& in) {
    return (torch::tanh(engine::rope_training(in[0], rope.cos(), rope.sin(), 5)) * c).sum();
  };
  CHECK(test::check_finite_differences(loss, {torch::randn({1, 3, 2, 8})}, 1, 1e-2, 3e-3) == 48);
}
