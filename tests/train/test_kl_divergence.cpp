// KL(reference || model) on a token stream (core/eval/kl_divergence.h): zero against itself, equal to a
// direct computation over the same windows (two windows of 8 and a short final one), the perplexity's
// token count, and a one-line error for different vocabularies.
#include "tests/torch_catch.h"

#include "core/common/error.h"
#include "core/data/shards/token_source.h"
#include "core/eval/kl_divergence.h"
#include "core/eval/perplexity.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

TEST_CASE("KL to a reference: zero against itself, the direct sum over the windows otherwise", "[eval][kl]") {
  Transformer model(test::tiny_model(32, 40)), reference(test::tiny_model(32, 40));
  model.init_weights(1);
  reference.init_weights(2);
  std::vector<std::int32_t> tokens(20);
  for (int i = 0; i < 20; ++i) tokens[i] = (i * 7 + 3) % 40;
  VectorTokenSource src;
  src.add("d", tokens);

  const KlResult self = evaluate_kl(model, model, src, 0, 8, 0, 4);
  CHECK(self.kl_sum == Approx(0).margin(1e-9));
  CHECK(self.tokens == evaluate_perplexity(model, src, 0, 8, 0, 4).tokens);  // 19: every token but the first

  // Windows [0, 9), [8, 17), [16, 20): contexts of 8, 8 and 3 tokens.
  torch::NoGradGuard ng;
  model.eval();
  reference.eval();
  double want = 0;
  std::int64_t positions = 0;
  for (const auto& [start, len] : std::vector<std::pair<int, int>>{{0, 8}, {8, 8}, {16, 3}}) {
    const auto context = torch::tensor(std::vector<std::int64_t>(tokens.begin() + start, tokens.begin() + start + len)).unsqueeze(0);
    const auto logq = torch::log_softmax(model.forward(context).to(torch::kDouble), -1);
    const auto logp = torch::log_softmax(reference.forward(context).to(torch::kDouble), -1);
    want += (logp.exp() * (logp - logq)).sum().item<double>();
    positions += len;
  }
  const KlResult kl = evaluate_kl(model, reference, src, 0, 8, 0, 4);
  CHECK(kl.tokens == positions);
  CHECK(kl.mean() == Approx(want / positions).epsilon(1e-4));
  CHECK(kl.mean() > 0);

  Transformer other(test::tiny_model(32, 41));
  CHECK_THROWS_WITH(evaluate_kl(model, other, src, 0, 8, 0, 4), Catch::Matchers::Contains("vocabularies differ"));
}
