// The one-pass SwiGLU activation (kernels/fused/swiglu.h) against SiLU(g) * u by definition.
#include <cmath>

#include "core/model/ffn.h"
#include "kernels/fused/swiglu.h"
#include "torch_catch.h"

using namespace moxlab;

TEST_CASE("Fused SwiGLU computes g * sigmoid(g) * u in place, for hand-picked values and wide rows", "[kernels]") {
  torch::NoGradGuard no_grad;
  // By hand: SiLU(0) = 0; SiLU(2) = 2 / (1 + e^-2) = 1.761594; SiLU(-3) = -3 / (1 + e^3) = -0.142278;
  // extremes: SiLU(100) = 100, SiLU(-100) = -100 e^-100 ~ -3.7e-42 (0 in float).
  auto g = torch::tensor({{0.0f, 2.0f, -3.0f, 100.0f, -100.0f}});
  auto u = torch::tensor({{5.0f, 0.5f, 2.0f, 1.0f, 1.0f}});
  REQUIRE(swiglu_fusable(g, u));
  const auto y = swiglu_inference(g, u);
  CHECK(y.data_ptr() == g.data_ptr());  // in place
  const auto expect = torch::tensor({{0.0f, 0.880797f, -0.284556f, 100.0f, 0.0f}});
  CHECK(torch::allclose(y, expect, 1e-5, 1e-6));
  // A stacked [rows, 2 n] product's halves (row stride 2 n), n with a tail past the last 8-wide vector.
  torch::manual_seed(3);
  for (int n : {1, 8, 37, 1024}) {
    INFO("n " << n);
    auto gate_up = torch::randn({19, 2 * n}) * 4;
    const auto gate = gate_up.narrow(1, 0, n), up = gate_up.narrow(1, n, n);
    const auto ref = gate.to(torch::kDouble) * torch::sigmoid(gate.to(torch::kDouble)) * up.to(torch::kDouble);
    REQUIRE(swiglu_fusable(gate, up));
    CHECK(torch::allclose(swiglu_inference(gate, up).to(torch::kDouble), ref, 1e-5, 1e-6));
    CHECK(torch::allclose(gate.to(torch::kDouble), ref, 1e-5, 1e-6));  // written into the stacked product
  }
}

TEST_CASE("swiglu_activation takes the fused form only where it applies", "[kernels]") {
  auto g = torch::randn({4, 6, 16}), u = torch::randn({4, 6, 16});
  CHECK_FALSE(swiglu_fusable(g, u));  // autograd on
  const auto ref = torch::silu(g) * u;
  torch::NoGradGuard no_grad;
  CHECK(swiglu_fusable(g, u));
  CHECK_FALSE(swiglu_fusable(g.transpose(1, 2), u.transpose(1, 2)));  // rows not contiguous
  CHECK_FALSE(swiglu_fusable(g.to(torch::kDouble), u.to(torch::kDouble)));
  CHECK(torch::allclose(swiglu_activation(g.transpose(1, 2).clone().transpose(1, 2), u), ref, 1e-5, 1e-6));  // torch form
  CHECK(torch::allclose(swiglu_activation(g, u), ref, 1e-5, 1e-6));
}
