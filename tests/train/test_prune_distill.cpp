// ToMoE's same-budget static baseline (issue 32): a statically pruned dense model tuned by distillation
// from its dense parent. train.teacher names the parent (a path or sweep reference); train.keep_pruned
// holds the pruned weights at zero through every optimiser step. Checked: a student distilled from itself
// has loss exactly 0; the pruned zeros survive tuning with keep_pruned (and the run counts the pruned
// start's active parameters) and regrow without it; the errors.
#include "tests/torch_catch.h"

#include "core/store/run_store.h"
#include "core/train/checkpoint.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {
std::int64_t zero_weights(const std::string& checkpoint) {
  const LoadedCheckpoint ck = load_checkpoint(checkpoint);
  std::int64_t zeros = 0;
  for (const auto& p : ck.model->parameters())
    if (p.dim() >= 2) zeros += p.eq(0).sum().item<std::int64_t>();
  return zeros;
}
}  // namespace

TEST_CASE("Static pruning tuned by distillation from the dense parent keeps its structure", "[e2e][prune][distill]") {
  const std::string dir = scratch_dir("prune_distill");
  const std::string parent = train_micro_checkpoint(dir, 12);
  RunStore store(dir + "/runs/runs.db");
  auto pruned = run_cli("prune wanda_2_4 --checkpoint " + parent + " --active 0.5 --calibration 2", dir);
  INFO(pruned.err);
  REQUIRE(pruned.exit_code == 0);
  const std::string start = store.artifacts(2, "checkpoint").at(0).path;
  const std::int64_t pruned_zeros = zero_weights(start);
  REQUIRE(pruned_zeros > 1000);

  const std::string tune = "train --config micro.toml --set train.max_steps=3 --set train.warmup_steps=1 --set train.log_every=1"
                           " --set train.eval_every=3 --set train.loss=distill --set train.init_from=" + start;
  // The pruned model distilled from itself: KL(p || p) = 0 on the first step's batch.
  auto self = run_cli(tune + " --set train.teacher=" + start + " --set train.keep_pruned=true", dir);
  INFO(self.err);
  REQUIRE(self.exit_code == 0);
  const auto first = store.metrics(3, "train/loss");
  REQUIRE(!first.empty());
  CHECK(first.front().step == 1);
  CHECK(first.front().value == Approx(0.0).margin(1e-6));

  // From the dense parent: a positive KL that the tuning lowers, and the pruned zeros all stay zero.
  auto kept = run_cli(tune + " --set train.teacher=" + parent + " --set train.keep_pruned=true", dir);
  INFO(kept.err);
  REQUIRE(kept.exit_code == 0);
  const auto curve = store.metrics(4, "train/loss");
  REQUIRE(curve.size() == 3);
  CHECK(curve.front().value > 1e-5);  // a 12-step parent is near uniform: its pruned copy is close to it
  CHECK(zero_weights(store.artifacts(4, "checkpoint").at(0).path) == pruned_zeros);
  CHECK(kept.err.find("distilling from " + parent) != std::string::npos);
  // The tuned student counts the pruned start's active parameters, not its dense parent's.
  CHECK(store.result(4, "params/active")->value == store.result(2, "params/active")->value);
  CHECK(store.result(4, "params/active")->value < store.result(4, "params/total")->value);

  // Without keep_pruned AdamW moves 2:4's pruned weights off zero (each has its own gradient).
  auto regrown = run_cli(tune + " --set train.teacher=" + parent, dir);
  INFO(regrown.err);
  REQUIRE(regrown.exit_code == 0);
  CHECK(zero_weights(store.artifacts(5, "checkpoint").at(0).path) < pruned_zeros / 10);

  CHECK(one_line_error(run_cli("train --config micro.toml --set train.teacher=" + parent, dir),
                       "train.teacher is used only with train.loss = distill"));
  // These two fail after the start is loaded (its log lines come first): the error is the last line.
  const auto fails_with = [](const CliResult& r, const std::string& needle) {
    return r.exit_code != 0 && r.err.find("moxlab: error: " + needle) != std::string::npos;
  };
  CHECK(fails_with(run_cli("train --config micro.toml --set train.keep_pruned=true --set train.init_from=" + parent, dir),
                   "train.keep_pruned: the model has no zero weights"));
  CHECK(fails_with(run_cli(tune + " --set train.teacher=sweep:none/dense", dir), "train.teacher 'sweep:none/dense': no sweep named none"));
}
