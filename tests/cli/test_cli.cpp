// End-to-end tests through the moxlab binary: training a micro model on real package text (loss
// falls), resume after a stop, evaluation and capture results in the store/HDF5, the stories260K
// generation check against llama2.c's reference output, and bad input giving one-line errors.
#include "tests/torch_catch.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/common/paths.h"
#include "core/data/tokenizers/tokenizer.h"
#include "core/store/run_store.h"
#include "core/store/tensor_log_reader.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

// llama2.c's run.c output for stories260K at temperature 0 and 200 steps (test_all.py in
// karpathy/llama2.c, the known-good reference for this model).
const char* kStories260KReference =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a "
    "big, red ball. She wanted to play with it, but it was too high.\nLily's mom said, \"Lily, let's go to the park.\" "
    "Lily was sad and didn't know what to do. She said, \"I want to play with your ball, but I can't find it.\"\nLily "
    "was sad and didn't know what to do. She said, \"I'm sorry, Lily. I didn't know what to do.\"\nLily didn't want to "
    "help her mom, so she";

// Trains `train` uninterrupted (store full.db) and again stopped by SIGTERM at its first checkpoint, then
// resumed (store runs/runs.db); both must log the same train/loss at every step, once each.
void check_resume_keeps_curve(const std::string& dir, const std::string& train, int steps) {
  auto full = run_cli(train + " --set run.store=full.db --set run.out_dir=full", dir);
  INFO(full.err);
  REQUIRE(full.exit_code == 0);
  interrupt_at_first_checkpoint(train, dir, "kill -TERM $pid");
  RunStore store(dir + "/runs/runs.db");
  const RunRecord stopped = store.get_run(1);
  INFO(stopped.error);
  // Either the signal arrived before the end (killed) or the tiny run finished first; both must resume correctly.
  if (stopped.status == RunStatus::killed) {
    auto res = run_cli(train + " --resume", dir);
    INFO(res.err);
    REQUIRE(res.exit_code == 0);
    CHECK(res.out.find("finished at step " + std::to_string(steps)) != std::string::npos);
  }
  CHECK(store.get_run(1).status == RunStatus::finished);
  const auto resumed_loss = store.metrics(1, "train/loss");
  const auto full_loss = RunStore(dir + "/full.db").metrics(1, "train/loss");
  REQUIRE(resumed_loss.size() == full_loss.size());  // steps redone after the checkpoint are not duplicated
  for (std::size_t i = 0; i < full_loss.size(); ++i) {
    INFO("step " << full_loss[i].step);
    CHECK(resumed_loss[i].value == Approx(full_loss[i].value).epsilon(1e-5));
  }
}

}  // namespace

TEST_CASE("Greedy stories260K generation equals llama2.c token for token", "[e2e][import]") {
  const std::string shared = shared_data_dir();
  if (shared.empty()) {
    WARN("skipping: ../shared/data not found (stories260K model)");
    return;
  }
  const std::string dir = scratch_dir("stories");
  const std::string m = shared + "/models/stories260K/stories260K.bin", t = shared + "/models/stories260K/tok512.bin";
  auto imp = run_cli("import llama2c --model '" + m + "' --tokenizer '" + t + "'", dir);
  REQUIRE(imp.exit_code == 0);
  const std::string ck = dir + "/runs/1-stories260K/checkpoint.pt";
  auto empty = run_cli("generate --checkpoint '" + ck + "' --prompt '' --greedy --max-new-tokens 200", dir);
  REQUIRE(empty.exit_code == 0);
  CHECK(empty.out == std::string(kStories260KReference) + "\n");
  // With the prompt the reference itself begins with, the continuation is the same text.
  auto prompted = run_cli("generate --checkpoint '" + ck + "' --prompt 'Once upon a time' --greedy --max-new-tokens 200", dir);
  REQUIRE(prompted.exit_code == 0);
  CHECK(prompted.out.rfind(kStories260KReference, 0) == 0);
  // The import is recorded as a finished run with its checkpoint.
  RunStore store(dir + "/runs/runs.db");
  CHECK(store.get_run(1).status == RunStatus::finished);
  CHECK(store.result(1, "params/active")->value == Approx(5 * (4096 + 2 * 2048 + 4096 + 3 * 64 * 172 + 128) + 64));
}

TEST_CASE("A micro model trained on real package text lowers its loss, and eval and capture record results", "[e2e][train]") {
  const std::string dir = scratch_dir("micro");
  const std::string cfg = write_micro_config(dir, 120);
  auto tr = run_cli("train --config micro.toml", dir);
  INFO(tr.err);
  REQUIRE(tr.exit_code == 0);
  RunStore store(dir + "/runs/runs.db");
  RunRecord run = store.get_run(1);
  CHECK(run.status == RunStatus::finished);
  CHECK(run.config_hash.size() == 64);
  CHECK(run.data_digest.size() == 64);
  CHECK_FALSE(run.git_rev.empty());
  auto loss = store.metrics(1, "train/loss");
  REQUIRE(loss.size() == 12);  // every 10 steps
  CHECK(loss.back().value < loss.front().value - 0.3);
  auto val = store.metrics(1, "val/loss");
  REQUIRE(val.size() == 3);  // steps 40, 80, 120
  CHECK(val.back().value < val.front().value);

  auto ev = run_cli("eval --run 1 --tasks copa,arc_easy,winogrande,lambada_openai --limit 12 --max-val-tokens 1024 --no-wikitext", dir);
  INFO(ev.err);
  REQUIRE(ev.exit_code == 0);
  // Clearly better than the add-one unigram model of the same train tokens, on every domain.
  auto ppl = store.result(1, "ppl/val/all"), unigram = store.result(1, "ppl/unigram/val/all");
  REQUIRE(ppl);
  REQUIRE(unigram);
  CHECK(ppl->value < 0.9 * unigram->value);
  const bool shared = !shared_data_dir().empty();
  if (shared) {
    auto acc = store.result(1, "arc_easy/acc_norm");
    REQUIRE(acc);
    CHECK(acc->meta_json.find("acc_norm") != std::string::npos);
    CHECK(store.items(1, "copa").size() == 12);
    CHECK(store.result(1, "lambada_openai/perplexity"));
  }
  // Several temperatures from one pass: 1 rewrites the model's own keys with the same values, the others
  // are stored beside them under @T keys.
  auto scaled = run_cli("eval --run 1 --tasks none --max-val-tokens 1024 --no-wikitext --temperature 1,2", dir);
  INFO(scaled.err);
  REQUIRE(scaled.exit_code == 0);
  CHECK(scaled.out.find("loss/val/all@T2") != std::string::npos);
  const auto hot = store.result(1, "loss/val/all@T2"), hot_entropy = store.result(1, "entropy/val/all@T2");
  REQUIRE(hot);
  REQUIRE(hot_entropy);
  CHECK(hot->meta_json.find("\"temperature\":2") != std::string::npos);
  CHECK(store.result(1, "loss/val/all")->value == Approx(std::log(ppl->value)));
  CHECK(hot_entropy->value > store.result(1, "entropy/val/all")->value);

  auto pr = run_cli("capture --run 1 --taps 'blocks.*.attn.out,blocks.0.ffn.act' --tokens 256 --seq-len 32 --out cap.h5", dir);
  INFO(pr.err);
  REQUIRE(pr.exit_code == 0);
  TensorLogReader h5(dir + "/cap.h5");
  const auto tokens = h5.read<std::int32_t>("/tokens");
  CHECK(tokens.size() >= 200);
  CHECK(h5.shape("/probes/blocks.1.attn.out") == std::vector<std::uint64_t>{tokens.size(), 64});
  CHECK(h5.shape("/probes/blocks.0.ffn.act")[0] == tokens.size());
  CHECK(h5.attr_int("/", "run_id") == 1);
  // Text offsets cover each token's decoded bytes.
  const auto offsets = h5.read<std::int64_t>("/text/offsets");
  const auto bytes = h5.read<std::uint8_t>("/text/bytes");
  CHECK(static_cast<std::size_t>(offsets.back()) == bytes.size());
  CHECK(store.artifacts(1, "capture").size() == 1);
}

TEST_CASE("A stopped run resumes to exactly the weights of an uninterrupted one", "[e2e][train][resume]") {
  const std::string dir = scratch_dir("resume");
  write_micro_config(dir, 40);
  check_resume_keeps_curve(dir, "train --config micro.toml", 40);
  auto a = run_cli("generate --checkpoint runs/1-micro/checkpoint.pt --prompt 'The ' --greedy --max-new-tokens 20", dir);
  auto b = run_cli("generate --checkpoint full/1-micro/checkpoint.pt --prompt 'The ' --greedy --max-new-tokens 20", dir);
  CHECK(a.out == b.out);
}

TEST_CASE("A stopped ToMoE run resumes on the gate noise of an uninterrupted one", "[e2e][train][resume][tomoe]") {
  // ToMoE's Gumbel noise comes from the default generator: a resume that did not restore it drew other
  // noise from its checkpoint on, and its routing losses left the uninterrupted curve by 1-10%.
  const std::string dir = scratch_dir("resume_tomoe");
  write_micro_config(dir, 20);
  auto dense = run_cli("train --config micro.toml --set run.store=parent.db --set run.out_dir=parent", dir);
  INFO(dense.err);
  REQUIRE(dense.exit_code == 0);
  const std::string tomoe = "train --config micro.toml --set model.attention=tomoe --set model.ffn=tomoe --set train.loss=distill "
                            "--set train.trainable=routing --set train.lr=1e-3 --set train.max_steps=40 --set train.log_every=1 "
                            "--set train.eval_every=0 --set train.init_from=" + dir + "/parent/1-micro/checkpoint.pt";
  check_resume_keeps_curve(dir, tomoe, 40);
  REQUIRE(RunStore(dir + "/full.db").metrics(1, "train/loss").size() == 40);  // every step compared
}

TEST_CASE("Bad input fails with one clear line and a non-zero exit", "[e2e][errors]") {
  const std::string dir = scratch_dir("errors");
  { std::ofstream(dir + "/typo.toml") << "[model]\ndimm = 64\n"; }
  CHECK(one_line_error(run_cli("train --config typo.toml", dir), "unknown config key 'model.dimm'"));
  CHECK(one_line_error(run_cli("train --config missing.toml", dir), "cannot open config file missing.toml"));
  CHECK(one_line_error(run_cli("train --config typo.toml --set model.dim=64 --set train.lr=-3", dir), "unknown config key"));
  { std::ofstream(dir + "/empty.toml") << ""; }
  CHECK(one_line_error(run_cli("config show --config empty.toml --set train.lr=-3", dir), "out of range"));
  CHECK(one_line_error(run_cli("generate --checkpoint nothing.pt", dir), "no such checkpoint: nothing.pt"));
  { std::ofstream(dir + "/trunc.pt") << "PK\x03\x04 truncated"; }
  CHECK(one_line_error(run_cli("generate --checkpoint trunc.pt", dir), "trunc.pt"));
  { std::ofstream(dir + "/bad.bin") << "short"; }
  CHECK(one_line_error(run_cli("import llama2c --model bad.bin --tokenizer bad.bin", dir), "bad.bin"));
  CHECK(one_line_error(run_cli("eval --run 5 --store none.db", dir), "no run store at none.db"));
  CHECK(one_line_error(run_cli("runs --store none.db", dir), "none.db"));
}
