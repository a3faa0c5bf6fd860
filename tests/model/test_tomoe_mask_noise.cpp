// ToMoE's mask noise (tomoe.mask_noise, issue 32): per token, as Eq. 3 and the official code draw it, or one
// draw per expert / per pass. In training, tokens routed to the same expert get their own MLP masks and
// their own q/k masks only under per-token noise; evaluation and frozen masks are unchanged (the q/k width
// Eq. 8 then sees, the widest token's, is checked with the other regulariser values in test_tomoe_model).
#include "tests/torch_catch.h"

#include "core/model/tomoe/head_dim_masks.h"
#include "core/model/tomoe/mlp_experts.h"

using namespace moxlab;

namespace {
MlpExpertOptions expert_options(bool token_noise) {
  MlpExpertOptions e;
  e.dim = 16;
  e.d_mid = 24;
  e.experts = 2;
  e.embedding = 8;
  e.offset = 0;  // partial masks: the noise decides many channels
  e.token_noise = token_noise;
  return e;
}
HeadDimMaskOptions mask_options(bool token_noise) {
  HeadDimMaskOptions o;
  o.dim = 16;
  o.head_dim = 8;
  o.embedding = 12;
  o.offset = 0;
  o.token_noise = token_noise;
  return o;
}
// Rows of masks [M, w] that equal the first row.
int rows_like_first(const torch::Tensor& masks) {
  return masks.eq(masks[0].unsqueeze(0)).all(-1).sum().item<int>();
}
}  // namespace

TEST_CASE("MLP masks: per-token noise gives tokens of one expert their own masks, per-expert noise shares one",
          "[tomoe][mlp][noise]") {
  torch::manual_seed(2);
  const auto x = torch::randn({1, 64, 16});
  const auto experts = torch::randn({2, 8});
  for (const bool token : {true, false}) {
    INFO((token ? "per token" : "per expert"));
    MlpExpertRouter r(expert_options(token));
    r->train();
    const auto g = r(x, experts);
    const auto chosen = g.route.argmax(-1).reshape({-1});
    const auto masks = g.token_masks.reshape({-1, 24});
    const auto same = masks.index_select(0, chosen.eq(chosen[0]).nonzero().squeeze(-1));
    REQUIRE(same.size(0) > 8);
    if (token) CHECK(rows_like_first(same) < same.size(0));
    else CHECK(rows_like_first(same) == same.size(0));
    CHECK(g.expert_masks.sizes() == torch::IntArrayRef({2, 24}));  // R_P / R_U's own per-expert draw
    // Evaluation: noise-free, each token's mask is its expert's.
    r->eval();
    const auto e = r(x, experts);
    CHECK(torch::equal(e.token_masks, torch::matmul(e.route, e.expert_masks)));
  }
}

TEST_CASE("MLP masks with per-token noise: gradients reach the router, the mask projection and the embeddings",
          "[tomoe][mlp][noise]") {
  torch::manual_seed(3);
  MlpExpertRouter r(expert_options(true));
  r->train();
  const auto experts = torch::randn({2, 8}, torch::requires_grad());
  const auto g = r(torch::randn({2, 5, 16}), experts);
  (g.token_masks * torch::randn({2, 5, 24})).sum().backward();
  CHECK(r->router->weight.grad().abs().sum().item<float>() > 0);
  CHECK(r->proj->weight.grad().abs().sum().item<float>() > 0);
  CHECK(experts.grad().abs().sum().item<float>() > 0);
}

TEST_CASE("q/k masks: per-token noise in training gives each token its own paired mask, eval one static mask",
          "[tomoe][attention][noise]") {
  torch::manual_seed(4);
  const auto x = torch::randn({2, 32, 16});
  const auto experts = torch::randn({4, 12});
  HeadDimMasker token(mask_options(true)), pass(mask_options(false));
  token->train();
  pass->train();
  const auto per_token = token(x, experts).qk;
  CHECK(per_token.sizes() == torch::IntArrayRef({2, 32, 8}));
  const auto rows = per_token.reshape({-1, 8});
  CHECK(torch::equal(rows.reshape({-1, 4, 2}).select(2, 0), rows.reshape({-1, 4, 2}).select(2, 1)));  // RoPE pairs
  CHECK(rows_like_first(rows) < rows.size(0));
  CHECK(pass(x, experts).qk.sizes() == torch::IntArrayRef({8}));
  token->eval();
  CHECK(token(x, experts).qk.sizes() == torch::IntArrayRef({8}));
}
