// sweep plan's CPU-time estimate (experiments/bench/sweep_estimate.h): one timing per distinct model,
// member times proportional to their training tokens, periodic validation at a third of a token's cost.
#include "tests/torch_catch.h"

#include "core/config/config.h"
#include "experiments/bench/sweep_estimate.h"

using namespace moxlab;

namespace {
Config micro(std::int64_t steps, std::int64_t seed, std::int64_t eval_every = 0) {
  Config c;
  c.model.dim = 32;
  c.model.n_layers = 1;
  c.model.n_heads = 2;
  c.model.n_kv_heads = 1;
  c.model.vocab_size = 64;
  c.train.batch_size = 2;
  c.train.seq_len = 16;
  c.train.max_steps = steps;
  c.train.warmup_steps = 0;
  c.train.seed = seed;
  c.train.eval_every = eval_every;
  c.train.eval_tokens = 300;
  return c;
}
}  // namespace

TEST_CASE("sweep estimate: one timing per model, times in proportion to tokens, validation at a third", "[sweep][estimate]") {
  const SweepEstimate e = estimate_sweep({micro(100, 1), micro(200, 2), micro(100, 3, 50)}, 1);
  REQUIRE(e.members.size() == 3);
  CHECK(e.models == 1);  // seeds, lengths and validation cadence share the model's timing
  CHECK(e.threads == 1);
  for (const auto& m : e.members) CHECK(m.error.empty());
  CHECK(e.members[0].tokens_per_s > 0);
  CHECK(e.members[1].seconds == Approx(2 * e.members[0].seconds));
  // 100 steps x 2 x 16 = 3200 tokens; 2 validations x 300 tokens x 9 package domains = 5400 at a third: 1800.
  CHECK(e.members[2].seconds == Approx(e.members[0].seconds * (3200.0 + 1800.0) / 3200.0));
  CHECK(e.total_seconds == Approx(e.members[0].seconds + e.members[1].seconds + e.members[2].seconds));
  const std::string text = format_sweep_estimate(e, "test CPU (AVX2)");
  CHECK(text.find("estimated CPU time:") == 0);
  CHECK(text.find("test CPU (AVX2)") != std::string::npos);
  CHECK(text.find("\n  2  ") != std::string::npos);
  CHECK(e.cpu_share > 0);  // the timings' CPU time over wall x threads
}

TEST_CASE("sweep estimate: a timing that got under 80% of its threads' CPU says the machine was busy", "[sweep][estimate]") {
  SweepEstimate e;
  e.threads = 2;
  e.members = {MemberEstimate{3600, 1000, ""}};
  e.total_seconds = 3600;
  e.models = 1;
  e.cpu_share = 0.45;
  const std::string busy = format_sweep_estimate(e, "test CPU (AVX2)");
  CHECK_THAT(busy, Catch::Matchers::Contains("busy machine: the timings got 45% of 2 thread(s)' CPU time"));
  e.cpu_share = 0.97;
  CHECK(format_sweep_estimate(e, "test CPU (AVX2)").find("busy machine") == std::string::npos);
  e.cpu_share = 0;  // nothing timed (every member a pruning run)
  CHECK(format_sweep_estimate(e, "test CPU (AVX2)").find("busy machine") == std::string::npos);
}

TEST_CASE("sweep estimate: a prune-then-distill member is timed before its pruned start and teacher exist", "[sweep][estimate]") {
  Config tuned = micro(100, 1);
  tuned.train.loss = "distill";
  tuned.train.keep_pruned = true;                      // its pruned start is a later member's output
  tuned.train.teacher = "sweep:not_run_yet/dense";     // so is its teacher
  Config pruning = micro(100, 1);
  pruning.prune.method = "wanda";
  const SweepEstimate e = estimate_sweep({tuned, pruning}, 1);
  REQUIRE(e.members.size() == 2);
  INFO(e.members[0].error);
  CHECK(e.members[0].error.empty());
  CHECK(e.members[0].seconds > 0);
  CHECK_THAT(e.members[1].error, Catch::Matchers::Contains("a pruning run"));
}
