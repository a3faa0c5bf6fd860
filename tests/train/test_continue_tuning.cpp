// Continue-tuning (MoH section 4.4, Fig. 2): a train.init_from reference to another sweep's member
// resolves to its checkpoint (and names what is missing otherwise); a dense model converted to MoH with
// the query-norm router and every head active reproduces the dense model's validation loss exactly at
// step 0 (binary gates of 1), with 75% of heads it starts worse; the step-0 validation and the dense
// start are stored as results; image runs train through the CLI and evaluate on the test split.
#include "tests/torch_catch.h"

#include <filesystem>
#include <fstream>

#include "core/common/error.h"
#include "core/data/corpora/idx_images.h"
#include "core/store/run_store.h"
#include "experiments/runner/checkpoint_ref.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

TEST_CASE("train.init_from sweep:NAME/VARIANT[/SEED] resolves to the finished member's checkpoint", "[continue]") {
  const std::string dir = scratch_dir("init_from_ref");
  const std::string db = dir + "/runs.db";
  CHECK(resolve_init_from("some/ckpt.pt", db, 1) == "some/ckpt.pt");  // a path passes through
  CHECK_THROWS_WITH(resolve_init_from("sweep:lm/dense/1", db, 1), Catch::Contains("no run store"));
  RunStore store(db);
  RunRecord run;
  run.name = "dense";
  const std::int64_t id = store.create_run(run);
  store.add_artifact(id, "checkpoint", dir + "/dense.pt");
  std::vector<SweepMember> members(3);
  members[0].config_json = R"({"run.variant":"dense","train.seed":1})";
  members[1].config_json = R"({"run.variant":"dense","train.seed":2})";
  members[2].config_json = R"({"run.variant":"moh_75","train.seed":1})";
  const std::int64_t sweep = store.create_sweep("lm", "{}", members);
  REQUIRE(store.claim_sweep_member(sweep, 0, "pending", "", "w"));
  REQUIRE(store.set_sweep_member_run(sweep, 0, "w", id));
  REQUIRE(store.finish_sweep_member(sweep, 0, "w", "finished"));

  CHECK(resolve_init_from("sweep:lm/dense/1", db, 1) == dir + "/dense.pt");
  CHECK_THROWS_WITH(resolve_init_from("sweep:lm/dense/2", db, 1), Catch::Contains("is pending, not finished"));
  CHECK_THROWS_WITH(resolve_init_from("sweep:lm/dense/3", db, 1), Catch::Contains("no member with run.variant dense and train.seed 3"));
  CHECK_THROWS_WITH(resolve_init_from("sweep:other/dense/1", db, 1), Catch::Contains("no sweep named other"));
  // Without SEED the continuing run's own seed picks the member.
  CHECK(resolve_init_from("sweep:lm/dense", db, 1) == dir + "/dense.pt");
  CHECK_THROWS_WITH(resolve_init_from("sweep:lm/dense", db, 2), Catch::Contains("is pending, not finished"));
  for (const char* bad : {"sweep:lm", "sweep:/dense", "sweep:lm/", "sweep:lm//1", "sweep:lm/dense/"})
    CHECK_THROWS_WITH(resolve_init_from(bad, db, 1), Catch::Contains("must be sweep:NAME/VARIANT or sweep:NAME/VARIANT/SEED"));
}

TEST_CASE("continue-tuning a dense model into MoH: step-0 validation, dense start, exact with all heads", "[e2e][continue][moh]") {
  const std::string dir = scratch_dir("continue_cli");
  const std::string ck = train_micro_checkpoint(dir, 12);
  RunStore store(dir + "/runs/runs.db");
  const std::string moh = " --set model.attention=moh --set moh.router=query_norm --set moh.shared=1 --set train.max_steps=4"
                          " --set train.warmup_steps=1 --set train.eval_every=2 --set train.init_from=" + ck;

  auto all = run_cli("train --config micro.toml" + moh + " --set moh.active=4", dir);  // every head active
  INFO(all.err);
  REQUIRE(all.exit_code == 0);
  const auto start = store.result(2, "init_from/val/loss"), converted = store.result(2, "train_start/val/loss");
  REQUIRE(start);
  REQUIRE(converted);
  CHECK(converted->value == Approx(start->value).epsilon(1e-6));  // binary gates of 1 = the dense model
  CHECK(store.result(1, "train_end/val/loss")->value == Approx(start->value).epsilon(1e-6));
  const auto curve = store.metrics(2, "val/loss");
  REQUIRE(curve.size() == 3);  // steps 0, 2, 4
  CHECK(curve[0].step == 0);

  auto part = run_cli("train --config micro.toml" + moh + " --set moh.active=3", dir);  // 75% of heads
  INFO(part.err);
  REQUIRE(part.exit_code == 0);
  // Dropping a quarter of the heads changes the function (better or worse, for a 12-step model).
  CHECK(store.result(3, "train_start/val/loss")->value != Approx(store.result(3, "init_from/val/loss")->value).epsilon(1e-6));

  auto bad = run_cli("train --config micro.toml" + moh + " --set moh.active=2 --set model.n_heads=2 --set model.n_kv_heads=2", dir);
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("model.n_heads differs from this model's") != std::string::npos);
  CHECK(store.get_run(4).status == RunStatus::failed);  // registered, then refused before any step
}

TEST_CASE("moxlab train on Fashion-MNIST: test top-1 per class and MoH head load per class", "[e2e][vit][moh][data]") {
  if (!std::filesystem::exists(fashion_mnist_dir())) {
    WARN("skipped: Fashion-MNIST not installed at " + fashion_mnist_dir() + " (Debian package dataset-fashion-mnist)");
    return;
  }
  const std::string dir = scratch_dir("vit_cli");
  { std::ofstream(dir + "/empty.toml") << ""; }  // every setting below comes from --set
  const std::string common = "train --config empty.toml --set data.images=fashion_mnist --set data.image_val=500 --set model.dim=32"
                             " --set model.n_layers=2 --set model.n_heads=4 --set model.n_kv_heads=4 --set model.patch_size=7"
                             " --set train.batch_size=32 --set train.max_steps=40 --set train.warmup_steps=2 --set train.eval_every=20"
                             " --set train.threads=1";
  auto r = run_cli(common + " --set model.attention=moh --set moh.shared=1 --set moh.active=3", dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  RunStore store(dir + "/runs/runs.db");
  const auto top1 = store.result(1, "top1/test");
  REQUIRE(top1);
  CHECK(top1->value > 0.25);  // chance is 0.1; 0.19 after 20 steps
  CHECK(store.result(1, "top1/test/Ankle boot"));
  CHECK(store.result(1, "top1/test/T-shirt_top"));  // "T-shirt/top" as one key segment
  CHECK(store.result(1, "routing/selected/blocks.1.attn/T-shirt_top/0")->value == 1.0);
  CHECK(store.result(1, "train_end/val/acc"));
  // Head load per class: head 0 shared (every patch token), the 3 routed heads share 2 slots.
  CHECK(store.result(1, "routing/selected/blocks.1.attn/Sneaker/0")->value == 1.0);
  double routed = 0;
  for (int h = 1; h < 4; ++h) routed += store.result(1, "routing/selected/blocks.1.attn/Sneaker/" + std::to_string(h))->value;
  CHECK(routed == Approx(2.0));
  CHECK(store.artifacts(1, "routing").size() == 1);

  // eval --run repeats the test evaluation of the stored weights: the same top-1, printed and stored.
  const double before = top1->value;
  store.put_result(1, "top1/test", -1.0, "{}");
  auto ev = run_cli("eval --run 1 --threads 1", dir);
  INFO(ev.err);
  REQUIRE(ev.exit_code == 0);
  CHECK(ev.out.find("top1/test/Sneaker") != std::string::npos);
  CHECK(store.result(1, "top1/test")->value == before);
  // A bare image checkpoint has no run to hold its test results.
  auto ev_ckpt = run_cli("eval --checkpoint runs/1-" + store.get_run(1).name + "/checkpoint.pt", dir);
  CHECK(one_line_error(ev_ckpt, "holds an image classifier"));
  auto bad = run_cli(common + " --set model.patch_size=5", dir);
  CHECK(one_line_error(bad, "model.patch_size (5) must divide the image size"));
}
