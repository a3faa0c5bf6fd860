// model.branch_scale, the branch-scale control of issue 32: a fixed or learned scalar on each block's
// attention and FFN output. Hand-checked block algebra, the same draw of every other weight, the engine's
// inference plan equal to the module's math, the learned scalar's gradient against the output projection's,
// parameter accounting and the config's refusals.
#include "tests/torch_catch.h"

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/engine/inference_plan.h"
#include "core/model/transformer.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

namespace {

ModelOptions scaled(const std::string& mode, double attn, double ffn) {
  ModelOptions o = test::tiny_model(32, 40);
  o.branch_scale = mode;
  o.attn_branch_scale = attn;
  o.ffn_branch_scale = ffn;
  return o;
}

}  // namespace

TEST_CASE("branch scale: h = x + s_a Attn(norm x), y = h + s_f FFN(norm h), every other weight drawn alike", "[model][branch_scale]") {
  Transformer plain(test::tiny_model(32, 40)), fixed(scaled("fixed", 0.25, 0.5));
  plain.init_weights(3);
  fixed.init_weights(3);
  const auto p = plain.named_parameters();
  for (const auto& item : fixed.named_parameters()) CHECK(torch::equal(item.value(), p[item.key()]));
  CHECK(fixed.named_buffers().contains("blocks.1.attn_scale"));

  torch::NoGradGuard ng;
  torch::manual_seed(1);
  const auto x = torch::randn({2, 5, 32});
  auto& block = *fixed.blocks->ptr<BlockImpl>(0);
  Analysis an;
  LayerIO io;
  const auto a = block.attn->forward(block.attn_norm(x), fixed.rope(), an, block.taps, io);
  const auto h = x + 0.25 * a;
  const auto want = h + 0.5 * block.ffn->forward(block.ffn_norm(h), an, block.taps, io);
  CHECK(torch::allclose(block.forward(x, fixed.rope(), an, io), want, 1e-6, 1e-6));
}

TEST_CASE("branch scale: the inference plan computes what the modules do (dense, MoHD, MoH, fixed and learned)",
          "[model][branch_scale]") {
  torch::NoGradGuard ng;
  const auto tokens = torch::randint(0, 40, {2, 9}, torch::kLong);
  for (const std::string mode : {"fixed", "learned"})
    for (const std::string kind : {"dense", "mohd", "moh"}) {
      INFO(mode << " " << kind);
      ModelOptions o = scaled(mode, 0.3, 2.0);
      if (kind != "dense") o.attention = kind;
      if (kind == "mohd") o.ffn = kind;
      o.moh.shared = 1;  // 2 of the 4 heads
      o.moh.active = 2;
      Transformer m(o);
      m.init_weights(4);
      m.eval();
      InferencePlan plan(m);
      CHECK(torch::allclose(plan.forward(tokens), m.forward(tokens), 1e-4, 1e-5));
      // And the scale is really applied: the plain model differs.
      Transformer plain(test::tiny_model(32, 40));
      plain.init_weights(4);
      if (kind == "dense") CHECK_FALSE(torch::allclose(plain.forward(tokens), m.forward(tokens), 1e-3, 1e-3));
    }
}

TEST_CASE("branch scale: learned scalars start at the configured values, their gradient is <dL/dW, W> / s of the output projection",
          "[model][branch_scale]") {
  Transformer m(scaled("learned", 0.25, 0.5));
  m.init_weights(5);
  const auto params = m.named_parameters();
  REQUIRE(params.contains("blocks.0.attn_scale"));
  CHECK(params["blocks.0.attn_scale"].item<float>() == 0.25f);
  CHECK(params["blocks.1.ffn_scale"].item<float>() == 0.5f);
  CHECK(params["blocks.1.ffn_scale"].requires_grad());
  // The branch output is s W x, so dL/ds = <dL/d(s W x), W x> = <dL/dW, W> / s: the scale's gradient is the
  // output projection's (wo, w2) gradient read along the weights, exactly.
  const auto tokens = torch::randint(0, 40, {2, 8}, torch::kLong);
  const auto targets = torch::randint(0, 40, {2, 8}, torch::kLong);
  Transformer::lm_loss(m.forward(tokens), targets).backward();
  for (int l = 0; l < 2; ++l)
    for (const auto& [scale, weight] : {std::pair<std::string, std::string>{"attn_scale", "attn.wo.weight"}, {"ffn_scale", "ffn.w2.weight"}}) {
      const std::string b = "blocks." + std::to_string(l) + ".";
      INFO(b + scale);
      const auto& s = params[b + scale];
      const auto& w = params[b + weight];
      CHECK(s.grad().item<double>() == Approx((w.grad() * w).sum().item<double>() / s.item<double>()).epsilon(1e-4));
      CHECK(s.grad().item<double>() != 0.0);
    }
}

TEST_CASE("branch scale: learned scalars count as active parameters, fixed ones do not", "[model][branch_scale]") {
  const auto plain = count_parameters(Transformer(test::tiny_model(32, 40)));
  const auto learned = count_parameters(Transformer(scaled("learned", 1, 1)));
  const auto fixed = count_parameters(Transformer(scaled("fixed", 1, 1)));
  CHECK(learned.total == plain.total + 4);  // 2 layers x (attention, FFN)
  CHECK(learned.active == plain.active + 4);
  CHECK(fixed.total == plain.total);
}

TEST_CASE("branch scale: config keys and refusals", "[model][branch_scale][config]") {
  Config c;
  apply_override(c, "model.branch_scale=fixed");
  apply_override(c, "model.attn_branch_scale=0.25");
  CHECK_NOTHROW(validate(c));
  Config loose;
  apply_override(loose, "model.attn_branch_scale=0.25");
  CHECK_THROWS_WITH(validate(loose), Catch::Matchers::Contains("need model.branch_scale = fixed or learned"));
  Config tomoe = c;
  tomoe.model.attention = "tomoe";
  CHECK_THROWS_WITH(validate(tomoe), Catch::Matchers::Contains("ToMoE converts a dense model"));
  CHECK_THROWS_AS(apply_override(c, "model.branch_scale=layer"), Error);
}
