// SwiGLU's activation in the model takes the fused kernel only where it applies.
#include "core/model/ffn.h"
#include "kernels/fused/swiglu.h"
#include "tests/torch_catch.h"

using namespace moxlab;

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
