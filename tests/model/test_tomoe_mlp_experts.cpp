// ToMoE MLP experts (Eq. 2-3, 11; App. B.3): the masked SwiGLU is the dense one with every channel kept
// and zero with none; each token's output equals its expert exported as a real, smaller SwiGLU (the
// pseudo-MoE / MoE equivalence); at initialisation every channel is kept (offset b = 3); evaluation
// routes by argmax; the straight-through gates pass gradients to the router and the mask projection.
#include "tests/torch_catch.h"

#include "core/common/error.h"
#include "core/model/tomoe/mlp_experts.h"

using namespace moxlab;

namespace {
ModelOptions ffn_options() {
  ModelOptions o;
  o.dim = 16;
  o.ffn_hidden = 24;
  return o;
}
MlpExpertOptions expert_options(int experts = 4) {
  MlpExpertOptions e;
  e.dim = 16;
  e.d_mid = 24;
  e.experts = experts;
  e.embedding = 8;
  return e;
}
}  // namespace

TEST_CASE("Masked SwiGLU (Eq. 2): all-ones mask is the dense FFN, all-zeros gives zero", "[tomoe][mlp]") {
  torch::manual_seed(1);
  SwiGLU ffn(ffn_options());
  auto x = torch::randn({2, 5, 16});
  Analysis an;
  LayerIO io;
  auto dense = ffn.forward(x, an, BlockTapNames(0), io);
  CHECK(torch::allclose(masked_swiglu(ffn, x, torch::ones({2, 5, 24})), dense, 1e-6, 1e-7));
  CHECK(masked_swiglu(ffn, x, torch::zeros({2, 5, 24})).abs().max().item<float>() == 0.0f);
}

TEST_CASE("Each token's masked output equals its expert exported with only the kept channels (App. B.3)",
          "[tomoe][mlp]") {
  torch::manual_seed(2);
  SwiGLU ffn(ffn_options());
  const int n = 3, tokens = 7;
  auto expert_masks = (torch::rand({n, 24}) < 0.6).to(torch::kFloat);  // widths differ per expert
  auto route_idx = torch::tensor({0, 2, 1, 1, 0, 2, 2});
  auto route = torch::one_hot(route_idx, n).to(torch::kFloat);
  auto x = torch::randn({tokens, 16});
  auto y = masked_swiglu(ffn, x, torch::matmul(route, expert_masks));
  for (int t = 0; t < tokens; ++t) {
    const int i = route_idx[t].item<int>();
    auto e = extract_expert(ffn, expert_masks[i]);
    CHECK(e.w_gate.size(0) == expert_masks[i].sum().item<float>());
    INFO("token " << t << " expert " << i);
    CHECK(torch::allclose(expert_forward(e, x[t]), y[t], 1e-5, 1e-6));
  }
  CHECK_THROWS_AS(extract_expert(ffn, torch::ones({23})), Error);
}

TEST_CASE("MLP expert router: all channels kept at init, argmax routing in eval, gradients reach router and projection",
          "[tomoe][mlp]") {
  torch::manual_seed(3);
  MlpExpertRouter r(expert_options());
  auto x = torch::randn({2, 6, 16});
  auto experts = torch::randn({4, 8});

  r->eval();
  auto g = r->forward(x, experts);
  CHECK(g.route.sizes() == torch::IntArrayRef({2, 6, 4}));
  CHECK(g.expert_masks.sizes() == torch::IntArrayRef({4, 24}));
  CHECK(g.expert_masks.sum().item<float>() == 4 * 24);  // offset 3: every expert starts as the whole FFN
  CHECK(torch::equal(g.route.argmax(-1), r->router(x).argmax(-1)));
  CHECK(torch::equal(g.route.sum(-1), torch::ones({2, 6})));
  CHECK(torch::allclose(g.probs.sum(-1), torch::ones({2, 6})));
  CHECK(torch::equal(g.token_masks, torch::ones({2, 6, 24})));

  // Training: noisy gates, still one expert per token and 0/1 masks; the loss reaches the router through
  // the route (G s_e) and the projection through the masks.
  r->train();
  torch::manual_seed(4);
  SwiGLU ffn(ffn_options());
  auto gt = r->forward(x, experts);
  CHECK(torch::equal(gt.route.sum(-1), torch::ones({2, 6})));
  CHECK(torch::equal(gt.expert_masks.detach(), (gt.expert_masks.detach() > 0.5).to(torch::kFloat)));
  masked_swiglu(ffn, x, gt.token_masks).pow(2).sum().backward();
  CHECK(r->router->weight.grad().abs().sum().item<float>() > 0);
  CHECK(r->proj->weight.grad().abs().sum().item<float>() > 0);
  CHECK_THROWS_AS(r->forward(x, torch::randn({3, 8})), Error);
}

TEST_CASE("Equal expert widths (App. B): each expert grows to the widest one's count by its gate scores, keeping its own channels",
          "[tomoe][mlp]") {
  // Kept where the score x + g + b >= 0; the widest row keeps 2, so every row keeps its top 2.
  const auto scores = torch::tensor({{3.0F, -1.0F, 2.0F, -0.5F}, {-2.0F, 5.0F, -1.0F, 0.5F}, {1.0F, -3.0F, -4.0F, -5.0F}});
  const auto masks = (scores >= 0).to(torch::kFloat);
  const auto grown = equalise_expert_widths(scores, masks);
  CHECK(torch::equal(grown, torch::tensor({{1.0F, 0.0F, 1.0F, 0.0F}, {0.0F, 1.0F, 0.0F, 1.0F}, {1.0F, 1.0F, 0.0F, 0.0F}})));
  // Equal scores go to the lower channel index; a layer whose experts all keep nothing stays empty.
  const auto ties = torch::tensor({{1.0F, -1.0F, -1.0F, -1.0F}, {-1.0F, 2.0F, 2.0F, -1.0F}});
  CHECK(torch::equal(equalise_expert_widths(ties, (ties >= 0).to(torch::kFloat)),
                     torch::tensor({{1.0F, 1.0F, 0.0F, 0.0F}, {0.0F, 1.0F, 1.0F, 0.0F}})));
  const auto none = -torch::ones({2, 4});
  CHECK(equalise_expert_widths(none, torch::zeros({2, 4})).sum().item<float>() == 0);
  CHECK_THROWS_AS(equalise_expert_widths(scores, masks.narrow(1, 0, 3)), Error);

  // Freezing: the frozen experts all keep the widest drawn count and contain their own draw; with "own"
  // they are the draw itself. offset 0 keeps about half of every mask, so the draws differ in width.
  torch::manual_seed(3);
  MlpExpertOptions e = expert_options();
  e.offset = 0.0;
  MlpExpertRouter widest(e);
  e.equal_widths = false;
  MlpExpertRouter own(e);
  {
    torch::NoGradGuard ng;
    auto dst = own->named_parameters();
    for (const auto& p : widest->named_parameters()) dst[p.key()].copy_(p.value());
  }
  const auto experts = torch::randn({4, 8});
  torch::manual_seed(9);
  const auto drawn = widest->freeze_masks(experts, true);
  torch::manual_seed(9);
  const auto drawn_own = own->freeze_masks(experts, true);
  CHECK(torch::equal(drawn, drawn_own));
  const auto counts = drawn.sum(-1);
  REQUIRE(counts.min().item<float>() < counts.max().item<float>());
  const auto frozen = widest->named_buffers()["frozen_masks"];
  CHECK(torch::equal(frozen.sum(-1), torch::full({4}, counts.max().item<float>())));
  CHECK((frozen >= drawn).all().item<bool>());
  CHECK(torch::equal(own->named_buffers()["frozen_masks"], drawn));
}
