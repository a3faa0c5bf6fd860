// MoHD's branch-scale switches (issue 32): the activation scaling's two readings of Sec. 4.2, alpha =
// N * sum(g) and alpha = K / sum(g), hand-computed in both the autograd and the fused inference forms,
// and the identity start of the Monarch fusion (M = I, every other weight drawn as before).
#include "tests/torch_catch.h"

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/model/mohd/monarch.h"
#include "core/model/mohd/sub_dim_router.h"
#include "core/model/transformer.h"
#include "tests/engine/finite_differences.h"
#include "tests/model/mohd_support.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;
using moxlab::testing::mohd;

TEST_CASE("MoHD alpha = K / sum(g): the active weights average 1 (hand values, both forms)", "[mohd][mohd_controls]") {
  MohdOptions o = mohd(4, 2, 1, 0);
  o.alpha = "k_over_sum";
  SubDimRouter router(2, o);
  router->centroids->weight.data().copy_(torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}, {-1.0f, 0.0f}}));
  // As test_mohd's router case: s = (0.088947, 0.241783, 0.657233, 0.012038), active {0, 2}, sum(g) = 0.746180;
  // alpha = K / sum(g) = 2 / 0.746180 = 2.680318: weights 0.238406 and 1.761594, summing to K = 2.
  const auto x = torch::tensor({{1.0f, 2.0f}});
  const auto r = router(x);
  CHECK(r.weights[0][0].item<float>() == Approx(0.238406).epsilon(1e-4));
  CHECK(r.weights[0][1].item<float>() == 0.0f);
  CHECK(r.weights[0][2].item<float>() == Approx(1.761594).epsilon(1e-4));
  CHECK(r.weights.sum().item<float>() == Approx(2.0).epsilon(1e-6));
  torch::NoGradGuard ng;  // the fused one-pass routing (kernels/sparse/sub_dim_topk) gives the same
  CHECK(torch::allclose(router(x).weights, r.weights.detach(), 1e-6, 1e-6));
  const auto many = torch::randn({64, 2});
  const auto fused = router(many);
  CHECK(torch::allclose(fused.weights.sum(-1), torch::full({64}, 2.0f), 1e-5, 1e-5));
}

TEST_CASE("MoHD alpha = K / sum(g): its gradient to the router scores matches finite differences", "[mohd][mohd_controls]") {
  MohdOptions o = mohd(6, 3, 1, 0);
  o.alpha = "k_over_sum";
  SubDimRouter router(2, o);
  torch::manual_seed(3);
  const auto logits = torch::randn({5, 6}, torch::kDouble);
  const auto probe = torch::randn({5, 6}, torch::kDouble);
  const int checked = test::check_finite_differences(
      [&](const std::vector<torch::Tensor>& in) { return torch::tanh(router->route_logits(in[0]).weights * probe).sum(); },
      {logits}, 1, 1e-6, 1e-6);
  CHECK(checked == 30);
}

TEST_CASE("Monarch fusion_init = identity: M = I after the model's draws, every other weight as before", "[mohd][mohd_controls]") {
  ModelOptions o = test::tiny_model(32, 40);
  o.attention = o.ffn = "mohd";
  o.mohd_attn = o.mohd_ffn = mohd(8, 4, 3, 8);
  Transformer uniform(o);
  o.mohd_attn.fusion_init = o.mohd_ffn.fusion_init = "identity";
  Transformer identity(o);
  uniform.init_weights(9);
  identity.init_weights(9);
  const auto drawn = uniform.named_parameters();
  int fusions = 0;
  for (const auto& item : identity.named_parameters())
    if (item.key().find(".monarch.") == std::string::npos) CHECK(torch::equal(item.value(), drawn[item.key()]));
  for (const auto& m : identity.modules(/*include_self=*/false))
    if (auto* fusion = dynamic_cast<MonarchImpl*>(m.get())) {
      CHECK(torch::allclose(fusion->dense(), torch::eye(32)));
      ++fusions;
    }
  CHECK(fusions == 4);  // attention and FFN of 2 layers
  for (const auto& m : uniform.modules(/*include_self=*/false))
    if (auto* fusion = dynamic_cast<MonarchImpl*>(m.get())) CHECK_FALSE(torch::allclose(fusion->dense(), torch::eye(32), 0.1, 0.1));
}

TEST_CASE("MoHD switches: config keys and their values", "[mohd][mohd_controls][config]") {
  Config c;
  apply_override(c, "mohd.attn.alpha=k_over_sum");
  apply_override(c, "mohd.ffn.fusion_init=identity");
  CHECK(c.model.mohd_attn.alpha == "k_over_sum");
  CHECK(c.model.mohd_ffn.alpha == "n_sum");
  CHECK(c.model.mohd_ffn.fusion_init == "identity");
  CHECK_THROWS_AS(apply_override(c, "mohd.attn.alpha=k_sum"), Error);
  CHECK_THROWS_AS(apply_override(c, "mohd.attn.fusion_init=eye"), Error);
}
