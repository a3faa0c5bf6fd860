// The README's quick tour, run as written: the ```sh block under "## Quick tour", in order, with bash
// -euo pipefail, in a fresh folder (a fresh run store), with the knobs at its top set to a micro model:
// the micro config, a two-member sweep, 2 zero-shot items per task and 2048 validation tokens per domain
// (no WikiText-2: the micro ToMoE model scores it at ~5k tokens/s), 4 conversion steps, 512 tokens per capture. Afterwards the store must hold exactly the runs the tour creates, and the ids the block
// captured must have reached the right runs (the ToMoE run evaluated and exported, not another).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/paths.h"
#include "core/store/run_store.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;
namespace fs = std::filesystem;

namespace {

// The first ```sh block after the "## Quick tour" heading (empty when there is none).
std::string quick_tour_block(const std::string& readme) {
  const auto heading = readme.find("\n## Quick tour");
  if (heading == std::string::npos) return "";
  const auto open = readme.find("\n```sh\n", heading);
  if (open == std::string::npos) return "";
  const auto body = open + 7;
  const auto close = readme.find("\n```", body);
  return close == std::string::npos ? "" : readme.substr(body, close - body + 1);
}

std::string tail(const std::string& s, std::size_t n) { return s.size() > n ? s.substr(s.size() - n) : s; }

}  // namespace

TEST_CASE("The README quick tour runs as written and in order on a fresh store", "[e2e][tour]") {
  const std::string data = shared_data_dir();
  if (data.empty()) {
    WARN("SKIPPED: ../shared/data not found (the tour imports stories260K and scores zero-shot tasks)");
    return;
  }
  const std::string block = quick_tour_block(file_text(source_dir() + "/README.md"));
  REQUIRE(block.find("--print-id") != std::string::npos);

  const std::string dir = scratch_dir("readme_tour");
  fs::create_directory_symlink(source_dir() + "/experiments", dir + "/experiments");  // the block's relative paths
  write_micro_config(dir, 12);
  std::ofstream(dir + "/sweep.toml") << "name = \"tour\"\nbase = \"micro.toml\"\nseeds = [1]\n"
                                        "set = [\"train.max_steps=6\", \"train.warmup_steps=2\", \"train.eval_every=3\"]\n"
                                        "[[axis]]\nkey = \"train.lr\"\nvalues = [3e-3, 5e-3]\n"
                                        "[eval]\ntasks = [\"none\"]\nwikitext = false\nmax_val_tokens = 1024\n";
  std::ofstream(dir + "/tour.sh") << block;

  // MOXLAB_ALLOW_MIXED_BUILDS: the tour's table pins one build, which a development tree's dirty build is not.
  const std::string cmd = "cd '" + dir + "' && MOXLAB_ALLOW_MIXED_BUILDS=1 B='" MOXLAB_CLI "' CONFIG=micro.toml SWEEP=sweep.toml "
                          "EVAL='--limit 2 --max-val-tokens 2048 --no-wikitext' STEPS=4 TOKENS=512 DATA='" +
                          data + "' bash -euo pipefail tour.sh > tour.out 2> tour.err";
  const int status = std::system(cmd.c_str());
  const std::string out = file_text(dir + "/tour.out"), err = file_text(dir + "/tour.err");
  INFO("stderr (tail):\n" << tail(err, 3000) << "\nstdout (tail):\n" << tail(out, 1500));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  // The runs the tour creates, in its order: dense, stories260K, the HF re-import, ToMoE, Wanda, 2 sweep members.
  RunStore store(dir + "/runs/runs.db");
  const auto runs = store.list_runs();
  REQUIRE(runs.size() == 7);
  CHECK(runs[0].name == "micro");
  CHECK(runs[1].name == "stories260K");
  CHECK(runs[2].name == "hf_tiny");
  CHECK(runs[3].name == "tomoe_target0.5");
  CHECK(runs[4].kind == "prune");
  for (const auto& r : runs) CHECK(to_string(r.status) == std::string("finished"));

  // eval --run $DENSE and --run $TOMOE reached those two runs; observe went to the dense one.
  CHECK(store.result(runs[0].id, "ppl/val/all"));
  CHECK(store.result(runs[0].id, "piqa/acc"));
  CHECK(store.result(runs[3].id, "ppl/val/all"));
  CHECK(store.result(runs[3].id, "tomoe/active_ratio"));
  CHECK_FALSE(store.result(runs[2].id, "ppl/val/all"));
  CHECK_FALSE(store.artifacts(runs[0].id, "observations").empty());
  // 4 routing steps cannot reach 50% active: said at the end, tagged, and the name claims only the target.
  CHECK(err.find("did NOT reach the target 0.5") != std::string::npos);
  CHECK(runs[3].tags == std::vector<std::string>{"target_missed"});
  CHECK(out.find("Once upon a time") != std::string::npos);  // generate on the imported stories260K
  CHECK(fs::exists(dir + "/hf_tiny/moxlab_tokenizer.txt"));
  CHECK(fs::exists(dir + "/moe.safetensors"));
  CHECK(fs::exists(dir + "/acts.h5"));
  CHECK(out.find("val ppl (train end)") != std::string::npos);  // the sweep's table
}
