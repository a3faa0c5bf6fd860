// The one-pass SwiGLU activation (kernels/fused/swiglu.h) against SiLU(g) * u by definition, on every ISA
// variant.
#include <cmath>

#include "kernels/fused/swiglu.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::for_each_isa;

TEST_CASE("Fused SwiGLU computes g * sigmoid(g) * u in place, for hand-picked values and wide rows", "[kernels]") {
  torch::NoGradGuard no_grad;
  for_each_isa([] {
    // By hand: SiLU(0) = 0; SiLU(2) = 2 / (1 + e^-2) = 1.761594; SiLU(-3) = -3 / (1 + e^3) = -0.142278;
    // extremes: SiLU(100) = 100, SiLU(-100) = -100 e^-100 ~ -3.7e-42 (0 in float).
    auto g = torch::tensor({{0.0f, 2.0f, -3.0f, 100.0f, -100.0f}});
    auto u = torch::tensor({{5.0f, 0.5f, 2.0f, 1.0f, 1.0f}});
    REQUIRE(swiglu_fusable(g, u));
    const auto y = swiglu_inference(g, u);
    CHECK(y.data_ptr() == g.data_ptr());  // in place
    const auto expect = torch::tensor({{0.0f, 0.880797f, -0.284556f, 100.0f, 0.0f}});
    CHECK(close_to(y, expect, 1e-5, 1e-6));
    // A stacked [rows, 2 n] product's halves (row stride 2 n), n with a tail past the last 8-wide vector.
    torch::manual_seed(3);
    for (int n : {1, 8, 37, 1024}) {
      INFO("n " << n);
      auto gate_up = torch::randn({19, 2 * n}) * 4;
      const auto gate = gate_up.narrow(1, 0, n), up = gate_up.narrow(1, n, n);
      const auto ref = gate.to(torch::kDouble) * torch::sigmoid(gate.to(torch::kDouble)) * up.to(torch::kDouble);
      REQUIRE(swiglu_fusable(gate, up));
      CHECK(close_to(swiglu_inference(gate, up).to(torch::kDouble), ref, 1e-5, 1e-6));
      CHECK(close_to(gate.to(torch::kDouble), ref, 1e-5, 1e-6));  // written into the stacked product
    }
  });
}
