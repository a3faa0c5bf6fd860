// ToMoE hypernetwork (Eq. 1, App. A.1): shapes, fixed untrained inputs, reproducibility from the seed,
// and that the bidirectional GRU runs over layers (the forward half of layer 0 sees only layer 0's
// input, the backward half sees every layer's).
#include "tests/torch_catch.h"

#include "core/common/error.h"
#include "core/model/tomoe/expert_hypernetwork.h"

using namespace moxlab;

namespace {
ExpertHypernetworkOptions opts(int layers, int experts, std::uint64_t seed = 5) {
  ExpertHypernetworkOptions o;
  o.layers = layers;
  o.experts = experts;
  o.seed = seed;
  return o;
}
}  // namespace

TEST_CASE("Hypernetwork: [L, N, 128] expert embeddings from fixed, untrained random inputs", "[tomoe][hypernetwork]") {
  ExpertHypernetwork hn(opts(4, 8));
  auto e = hn->forward();
  CHECK(e.sizes() == torch::IntArrayRef({4, 8, 128}));
  CHECK(hn->embedding_size() == 128);

  // z is a buffer (saved, not a parameter): an optimiser over parameters() never moves it.
  for (const auto& p : hn->named_parameters()) CHECK(p.key().rfind("gru.", 0) == 0);
  CHECK(hn->named_buffers().contains("z"));
  CHECK_FALSE(hn->z.requires_grad());
  e.pow(2).sum().backward();
  for (const auto& p : hn->parameters()) CHECK(p.grad().defined());

  // Same seed, same inputs; another seed, other inputs.
  CHECK(torch::equal(ExpertHypernetwork(opts(4, 8))->z, hn->z));
  CHECK_FALSE(torch::equal(ExpertHypernetwork(opts(4, 8, 6))->z, hn->z));
  CHECK(hn->z.mean().abs().item<float>() < 0.2f);
  CHECK(hn->z.std().item<float>() == Approx(1.0).margin(0.15));
  CHECK_THROWS_AS(ExpertHypernetwork(opts(0, 8)), Error);
}

TEST_CASE("Hypernetwork: the bidirectional GRU runs over layers, experts are independent", "[tomoe][hypernetwork]") {
  torch::NoGradGuard no_grad;
  ExpertHypernetwork hn(opts(3, 2));
  auto before = hn->forward().clone();
  hn->z[2][0] += 1.0;  // change expert 0's input at the last layer
  auto after = hn->forward();
  // Layer 0, expert 0: the forward direction (first 64 values) has only seen layer 0; the backward
  // direction (last 64) has seen layer 2.
  CHECK(torch::equal(after[0][0].narrow(0, 0, 64), before[0][0].narrow(0, 0, 64)));
  CHECK_FALSE(torch::allclose(after[0][0].narrow(0, 64, 64), before[0][0].narrow(0, 64, 64)));
  CHECK_FALSE(torch::allclose(after[2][0], before[2][0]));
  // Expert 1 is another batch element: untouched at every layer.
  CHECK(torch::equal(after.select(1, 1), before.select(1, 1)));
}
