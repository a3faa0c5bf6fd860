// Two processes of one binary given the same config and seed train bitwise-identical runs: every logged
// training loss and validation number is equal, not merely close. This is what lets a rerun stand in for
// a lost run, and why seed-to-seed spread (not run-to-run noise) is what tables' standard errors measure.
// Checked with two LibTorch threads (intra-op parallel reductions) and for MoHD, whose top-k routing
// would turn any numerical difference into a different set of active sub-dimensions.
#include "tests/torch_catch.h"

#include "core/store/run_store.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

void require_identical_runs(const std::string& dir, const std::string& extra) {
  for (const char* store : {"a", "b"}) {
    auto res = run_cli(std::string("train --config micro.toml --set train.threads=2 --set run.store=") + store +
                           ".db --set run.out_dir=" + store + extra,
                       dir);
    INFO(res.err);
    REQUIRE(res.exit_code == 0);
  }
  RunStore a(dir + "/a.db"), b(dir + "/b.db");
  for (const char* key : {"train/loss", "train/grad_norm", "val/loss"}) {
    INFO(key);
    const auto ma = a.metrics(1, key), mb = b.metrics(1, key);
    REQUIRE(!ma.empty());
    REQUIRE(ma.size() == mb.size());
    for (std::size_t i = 0; i < ma.size(); ++i) {
      CHECK(ma[i].step == mb[i].step);
      CHECK(ma[i].value == mb[i].value);  // bitwise: no tolerance
    }
  }
}

}  // namespace

TEST_CASE("Two processes train bitwise-identical dense runs from one config and seed", "[e2e][train][determinism]") {
  const std::string dir = scratch_dir("determinism_dense");
  write_micro_config(dir, 30);
  require_identical_runs(dir, "");
}

TEST_CASE("Two processes train bitwise-identical MoHD runs (top-k routing) from one config and seed",
          "[e2e][train][determinism]") {
  const std::string dir = scratch_dir("determinism_mohd");
  write_micro_config(dir, 30);
  require_identical_runs(dir,
                         " --set model.attention=mohd --set mohd.attn.sub_dims=8 --set mohd.attn.active=4"
                         " --set mohd.attn.shared=2 --set mohd.attn.fusion_groups=8 --set model.ffn=mohd"
                         " --set mohd.ffn.sub_dims=8 --set mohd.ffn.active=4 --set mohd.ffn.shared=2"
                         " --set mohd.ffn.fusion_groups=8");
}
