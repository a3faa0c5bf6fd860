// The engine's ops (core/engine/ops.h) take their fused kernel only where its predicate holds and equal
// the model's torch formulas (core/model) they stand for: RMSNorm, the residual add fused into it, RoPE
// (at a start position, on strided views, per row), attention with gates and output-dim scales, the SwiGLU
// activation and Monarch's mix; and the plan's last-position logits.
#include "tests/torch_catch.h"

#include "core/engine/inference_plan.h"
#include "core/engine/ops.h"
#include "core/model/attention.h"
#include "core/model/rmsnorm.h"
#include "kernels/fused/rms_norm.h"
#include "kernels/fused/rope.h"
#include "kernels/fused/swiglu.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

TEST_CASE("engine::rms_norm and add_rms_norm equal RMSNorm (hand values, rows with a tail)", "[engine]") {
  torch::NoGradGuard ng;
  const auto w = torch::tensor({1.0f, 2.0f});
  // rms of (3, 4) = sqrt((9 + 16) / 2) = 3.5355339
  const auto y = engine::rms_norm(torch::tensor({{3.0f, 4.0f}}), w, 0.0);
  CHECK(y[0][0].item<float>() == Approx(3.0 / 3.5355339).epsilon(1e-6));
  CHECK(y[0][1].item<float>() == Approx(2.0 * 4.0 / 3.5355339).epsilon(1e-6));
  const auto [sum, normed] = engine::add_rms_norm(torch::tensor({{1.0f, 5.0f}}), torch::tensor({{2.0f, -1.0f}}), w, 0.0);
  CHECK(torch::equal(sum, torch::tensor({{3.0f, 4.0f}})));
  CHECK(torch::allclose(normed, y, 1e-6, 1e-7));
  // Rows wider than 8 lanes with a tail (d = 21), eps > 0: the kernel against the model's formula.
  torch::manual_seed(5);
  const auto x = torch::randn({3, 7, 21}), a = torch::randn({3, 7, 21}), ww = torch::rand({21}) + 0.5;
  REQUIRE(rms_norm_fusable(x, ww));
  CHECK(torch::allclose(engine::rms_norm(x, ww, 1e-5), rms_norm(x, ww, 1e-5), 1e-5, 1e-6));
  const auto [s2, n2] = engine::add_rms_norm(x, a, ww, 1e-5);
  CHECK(torch::allclose(s2, x + a, 1e-6, 1e-7));
  CHECK(torch::allclose(n2, rms_norm(x + a, ww, 1e-5), 1e-5, 1e-6));
}

TEST_CASE("engine::rope_apply equals Rope::apply from a start position, on strided views and per row", "[engine]") {
  torch::NoGradGuard ng;
  torch::manual_seed(8);
  // MoHD's q is a slice of one Q/K/V product; a KV cache starts at a later position.
  Rope wide(6, 16, 10000.0);
  const auto qkv = torch::randn({2, 5, 4 * 6 + 3});
  const auto q = qkv.narrow(2, 3, 4 * 6).view({2, 5, 4, 6});
  REQUIRE(rope_fusable(q, wide.cos()));
  CHECK(torch::allclose(engine::rope_apply(wide, q, 7), wide.apply(q, 7), 1e-6, 1e-6));
  // Head widths whose pairs fill vectors of eight (48: three) and leave a tail (20: one and two pairs).
  for (const int hd : {48, 20}) {
    INFO("head width " << hd);
    Rope rope(hd, 16, 10000.0);
    const auto x = torch::randn({2, 5, 3, hd}).narrow(2, 1, 2);  // a strided view
    REQUIRE(rope_fusable(x, rope.cos()));
    CHECK(torch::allclose(engine::rope_apply(rope, x, 3), rope.apply(x, 3), 1e-6, 1e-6));
    // Rows each at their own position (MoHD's routed order).
    const auto rows = torch::randn({9, 2, hd});
    const auto positions = torch::randint(0, 16, {9}, torch::kLong);
    CHECK(torch::allclose(engine::rope_apply_rows(rope, rows, positions), rope.apply_rows(rows, positions), 1e-6, 1e-6));
  }
}

TEST_CASE("engine::attention equals dot_product_attention with gates and output-dim scales", "[engine]") {
  torch::NoGradGuard ng;
  torch::manual_seed(4);
  const auto q = torch::randn({2, 4, 9, 16}), k = torch::randn({2, 2, 9, 16}), v = torch::randn({2, 2, 9, 16});
  auto gates = torch::rand({2, 9, 4});
  gates.masked_fill_(torch::rand({2, 9, 4}) < 0.5, 0.0);
  const auto dims = (torch::rand({2, 9, 16}) < 0.5).to(torch::kFloat);
  for (const bool causal : {true, false}) {
    INFO("causal " << causal);
    CHECK(torch::allclose(engine::attention(q, k, v, causal), dot_product_attention(q, k, v, causal), 1e-5, 1e-6));
    CHECK(torch::allclose(engine::attention(q, k, v, causal, 0.25, gates, dims), dot_product_attention(q, k, v, causal, 0.25, gates, dims),
                          1e-5, 1e-6));
  }
}

TEST_CASE("engine::swiglu_activation takes the fused form only where it applies", "[engine]") {
  auto g = torch::randn({4, 6, 16}), u = torch::randn({4, 6, 16});
  CHECK_FALSE(swiglu_fusable(g, u));  // autograd on
  const auto ref = torch::silu(g) * u;
  torch::NoGradGuard no_grad;
  CHECK(swiglu_fusable(g, u));
  CHECK_FALSE(swiglu_fusable(g.transpose(1, 2), u.transpose(1, 2)));  // rows not contiguous
  CHECK_FALSE(swiglu_fusable(g.to(torch::kDouble), u.to(torch::kDouble)));
  CHECK(torch::allclose(engine::swiglu_activation(g.transpose(1, 2).clone().transpose(1, 2), u), ref, 1e-5, 1e-6));  // torch form
  CHECK(torch::allclose(engine::swiglu_activation(g.clone(), u), ref, 1e-5, 1e-6));
}

TEST_CASE("engine::monarch equals Monarch's forward", "[engine][mohd]") {
  torch::manual_seed(2);
  Monarch m(24, 4);
  const auto x = torch::randn({3, 5, 24});
  const auto ref = m(x).detach();
  torch::NoGradGuard ng;
  CHECK(torch::allclose(engine::monarch(*m, x), ref, 1e-5, 1e-6));
}

TEST_CASE("last_logits_only gives the last position's logits of the whole forward", "[engine]") {
  torch::manual_seed(6);
  ModelOptions o = test::tiny_model(8, 10);
  o.n_heads = 2;
  o.n_kv_heads = 1;
  Transformer m(o);
  m.init_weights(6);
  InferencePlan plan(m);
  const auto tokens = torch::tensor({{1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}}, torch::kLong);
  ExecOptions last;
  last.last_logits_only = true;
  const auto l = plan.forward(tokens, last);
  CHECK(l.sizes() == torch::IntArrayRef({2, 1, 10}));
  CHECK(torch::allclose(l, plan.forward(tokens).narrow(1, 4, 1), 1e-6, 1e-6));
}
