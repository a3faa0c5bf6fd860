// ToMoE head-dimension masks (Eq. 4-5, App. A.2): the static q/k mask keeps RoPE pairs together, so it
// commutes with moxlab's (interleaved) RoPE and a masked q.k equals the dot product over the kept pairs;
// it does not depend on the tokens; the per-token v/o mask does; everything is kept at initialisation;
// inference switches to top-K with K the average kept count.
#include "tests/torch_catch.h"

#include "core/common/error.h"
#include "core/model/rope.h"
#include "core/model/tomoe/head_dim_masks.h"

using namespace moxlab;

namespace {
HeadDimMaskOptions options() {
  HeadDimMaskOptions o;
  o.dim = 16;
  o.head_dim = 8;
  o.embedding = 12;
  return o;
}
}  // namespace

TEST_CASE("RoPE-paired q/k mask commutes with rotary embedding — a mask that splits a pair does not",
          "[tomoe][attention]") {
  CHECK(torch::equal(rope_pair_mask(torch::tensor({1.0f, 0.0f, 1.0f})), torch::tensor({1.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f})));
  torch::manual_seed(5);
  Rope rope(8, 32, 10000.0);
  auto q = torch::randn({1, 6, 2, 8});  // [B, T, H, head_dim]
  auto k = torch::randn({1, 6, 2, 8});
  auto paired = rope_pair_mask(torch::tensor({1.0f, 0.0f, 1.0f, 0.0f}));
  CHECK(torch::allclose(rope.apply(q * paired, 3), rope.apply(q, 3) * paired, 1e-6, 1e-7));
  // Scores of the pruned heads equal scores computed on the kept dimensions only, after RoPE.
  auto scores = (rope.apply(q * paired) * rope.apply(k * paired)).sum(-1);
  auto kept = torch::tensor({0, 1, 4, 5});
  auto kept_scores = (rope.apply(q).index_select(-1, kept) * rope.apply(k).index_select(-1, kept)).sum(-1);
  CHECK(torch::allclose(scores, kept_scores, 1e-5, 1e-6));
  // Splitting a pair mixes a pruned dimension back in through the rotation.
  auto split = torch::tensor({1.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f});
  CHECK_FALSE(torch::allclose(rope.apply(q * split, 3), rope.apply(q, 3) * split, 1e-4, 1e-5));
}

TEST_CASE("Head-dim masker: static q/k mask, per-token v/o mask, all kept at init, top-K at inference",
          "[tomoe][attention]") {
  torch::manual_seed(6);
  HeadDimMasker m(options());
  auto x = torch::randn({2, 5, 16});
  auto experts = torch::randn({4, 12});
  m->eval();
  auto masks = m->forward(x, experts);
  CHECK(masks.qk.sizes() == torch::IntArrayRef({8}));
  CHECK(masks.vo.sizes() == torch::IntArrayRef({2, 5, 8}));
  CHECK(masks.qk.sum().item<float>() == 8);   // offset 3: nothing pruned before training
  CHECK(masks.vo.sum().item<float>() == 80);
  // q/k: a function of the expert embeddings only.
  CHECK(torch::equal(m->forward(torch::randn({3, 16}), experts).qk, masks.qk));

  // Push the decoder so that masks are partial; then the q/k mask stays paired and v/o varies by token.
  torch::NoGradGuard no_grad;
  m->dec->bias.sub_(torch::linspace(0, 6, 12));
  m->dec->weight.mul_(20);
  auto partial = m->forward(x, experts);
  auto qk = partial.qk;
  CHECK(torch::equal(qk.narrow(0, 0, 8).reshape({4, 2}).select(1, 0), qk.reshape({4, 2}).select(1, 1)));
  CHECK(qk.sum().item<float>() < 8);
  auto vo = partial.vo.reshape({-1, 8});
  CHECK(vo.sum().item<float>() > 0);
  CHECK_FALSE(torch::equal(vo, vo[0].expand_as(vo)));  // differs across tokens

  // Inference: exactly K kept per token, the K largest decoder logits.
  const int k = average_kept(partial.vo);
  CHECK(k == static_cast<int>(std::lround(partial.vo.sum(-1).mean().item<double>())));
  m->set_inference_top_k(std::max(k, 1));
  auto inference = m->forward(x, experts);
  CHECK(torch::equal(inference.vo.sum(-1), torch::full({2, 5}, static_cast<float>(std::max(k, 1)))));
  CHECK(torch::equal(inference.qk, qk));
  CHECK_THROWS_AS(m->set_inference_top_k(9), Error);
}

TEST_CASE("Top-K mask and the average kept count", "[tomoe][attention]") {
  auto logits = torch::tensor({{0.1, 2.0, -1.0, 0.5}, {3.0, 0.0, 1.0, 2.0}});
  CHECK(torch::equal(top_k_mask(logits, 2), torch::tensor({{0.0, 1.0, 0.0, 1.0}, {1.0, 0.0, 0.0, 1.0}})));
  // Kept counts 3 and 2 -> mean 2.5 -> round half away from zero -> 3.
  CHECK(average_kept(torch::tensor({{1.0, 1.0, 1.0, 0.0}, {0.0, 1.0, 1.0, 0.0}})) == 3);
  CHECK(average_kept(torch::tensor({{1.0, 0.0, 0.0, 0.0}, {0.0, 1.0, 1.0, 0.0}})) == 2);  // 1.5 -> 2
  CHECK_THROWS_AS(top_k_mask(logits, 5), Error);
}

TEST_CASE("Freezing the q/k mask keeps at least min_qk_pairs pairs, the highest-scoring ones (official: 1)",
          "[tomoe][attention]") {
  torch::manual_seed(7);
  for (const int least : {0, 1, 2}) {
    INFO("min_qk_pairs " << least);
    HeadDimMaskOptions o = options();
    o.min_qk_pairs = least;
    HeadDimMasker m(o);
    const auto experts = torch::randn({4, 12});
    torch::NoGradGuard no_grad;
    m->dec->weight.zero_();  // q/k logits = the bias: pair 2 scores highest, then pair 0, and every gate drops
    m->dec->bias.copy_(torch::cat({torch::zeros({8}), torch::tensor({-10.0f, -20.0f, -5.0f, -30.0f})}));
    m->freeze_qk(experts, false);
    m->eval();
    const auto qk = m->forward(torch::randn({1, 2, 16}), experts).qk;
    const float want[3][8] = {{0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 1, 0, 0}, {1, 1, 0, 0, 1, 1, 0, 0}};
    CHECK(torch::equal(qk, torch::from_blob(const_cast<float*>(want[least]), {8}).clone()));
  }
}
