// The fused language-modelling loss (core/engine/training_loss.h, kernels/fused/cross_entropy.h): hand
// values; loss and gradient equal LibTorch's cross_entropy in float64 on every ISA (vocabularies with
// vector tails, ignored targets, large logits); central finite differences; a second backward and bad
// targets are refused.
#include "tests/torch_catch.h"

#include <cmath>

#include "core/engine/training_loss.h"
#include "core/model/transformer.h"
#include "tests/engine/finite_differences.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;

TEST_CASE("fused lm loss: hand-computed loss and gradient", "[engine]") {
  // One row of logits (0, ln 3) against target 1: p = (1/4, 3/4), loss = -ln(3/4); d/dx = p - onehot.
  const auto x = torch::tensor({{0.0f, static_cast<float>(std::log(3.0))}}).requires_grad_();
  const auto loss = engine::lm_loss_fused(x, torch::tensor({1}, torch::kLong));
  CHECK(loss.item<double>() == Approx(-std::log(0.75)).epsilon(1e-6));
  loss.backward();
  CHECK(close_to(x.grad(), torch::tensor({{0.25f, -0.25f}}), 1e-6, 1e-7));
}

TEST_CASE("fused lm loss equals LibTorch's cross-entropy in float64 on every ISA", "[engine]") {
  for (const std::int64_t v : {1, 7, 16, 37, 4096}) {
    INFO("vocabulary " << v);
    torch::manual_seed(static_cast<std::uint64_t>(v));
    const auto logits = torch::randn({2, 9, v}) * 4 + (v == 37 ? 80.0 : 0.0);  // large logits: the max shift matters
    auto targets = torch::randint(v, {2, 9}, torch::kLong);
    targets[0][3] = -1;  // ignored
    targets[1][0] = -1;
    auto xr = d64(logits).requires_grad_();
    const auto want = Transformer::lm_loss(xr, targets);
    want.backward();
    test::for_each_isa([&] {
      auto x = logits.clone().requires_grad_();
      const auto got = engine::lm_loss_fused(x, targets);
      got.backward();
      CHECK(got.item<double>() == Approx(want.item<double>()).epsilon(1e-5));
      CHECK(close_to(x.grad(), xr.grad(), 1e-4, 1e-7));
    });
  }
}

TEST_CASE("fused lm loss: the custom backward against central finite differences, and what it refuses", "[engine]") {
  torch::manual_seed(3);
  const auto targets = torch::tensor({2, 0, -1, 4}, torch::kLong);
  const auto w = torch::randn({4, 5});
  const auto loss = [&](const std::vector<torch::Tensor>& in) { return engine::lm_loss_fused(torch::tanh(in[0]) * w, targets) * 3.0; };
  CHECK(test::check_finite_differences(loss, {torch::randn({4, 5})}, 1, 1e-2, 2e-3) == 20);
  auto x = torch::randn({4, 5}).requires_grad_();
  const auto l = engine::lm_loss_fused(x, targets);
  l.backward(torch::Tensor(), /*retain_graph=*/true);
  CHECK_THROWS(l.backward());  // the probabilities became the first backward's gradient
  CHECK_THROWS(engine::lm_loss_fused(x, torch::tensor({0, 1, 2, 5}, torch::kLong)));  // id 5 of 5
  CHECK_THROWS(engine::lm_loss_fused(x, torch::tensor({0, 1, 2}, torch::kLong)));      // 3 targets, 4 rows
  CHECK_FALSE(engine::training_loss_applies(torch::zeros({2, 3}, torch::kDouble)));
}
