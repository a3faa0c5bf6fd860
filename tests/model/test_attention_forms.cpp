// Attention's two forms in the model: dot_product_attention takes the fused kernel without autograd and
// the torch form with it; RoPE at each row's own position.

#include "core/model/attention.h"
#include "core/model/rope.h"
#include "kernels/fused/attention.h"
#include "tests/torch_catch.h"

using namespace moxlab;

TEST_CASE("dot_product_attention takes the fused form without autograd and the torch form with it", "[kernels]") {
  torch::manual_seed(12);
  auto q = torch::randn({2, 8, 70, 48}), k = torch::randn({2, 2, 70, 48}), v = torch::randn({2, 2, 70, 48});
  const auto torch_form = dot_product_attention_torch(q, k, v, true);
  {
    torch::NoGradGuard no_grad;
    REQUIRE(attention_fusable(q, k, v));
    CHECK(torch::allclose(dot_product_attention(q, k, v, true), torch_form, 1e-5, 1e-5));
  }
  CHECK_FALSE(attention_fusable(q, k, v));  // autograd on: the torch form, which records the graph
  CHECK_FALSE(attention_fusable(q.to(torch::kDouble), k.to(torch::kDouble), v.to(torch::kDouble)));
  torch::NoGradGuard no_grad;
  CHECK_FALSE(attention_fusable(q, k, v.narrow(3, 0, 12)));  // values not a multiple of 8 wide
  CHECK_FALSE(attention_fusable(q, k, torch::randn({2, 2, 48, 70}).transpose(2, 3)));  // rows not contiguous
  CHECK_THROWS(attention_inference(q, k, v.narrow(3, 0, 12), true, 1.0));
}


TEST_CASE("RoPE at each row's own position equals RoPE in token order, permuted", "[model]") {
  torch::NoGradGuard no_grad;
  torch::manual_seed(13);
  const int B = 3, T = 37, H = 4, hd = 16;
  const auto q = torch::randn({B, T, H, hd});
  const auto order = torch::randperm(B * T, torch::kLong);
  auto rows = [&](const torch::Tensor& t) { return t.reshape({B * T, t.size(2), hd}).index_select(0, order); };
  const Rope rope(hd, 64, 10000.0);
  CHECK(torch::allclose(rope.apply_rows(rows(q), order.remainder(T)), rows(rope.apply(q)), 1e-6, 1e-6));
}
