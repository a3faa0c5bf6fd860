// A sweep run as shards (what a multi-node Slurm array does: `sweep slurm` copies the plan into one
// store per task, each task runs its member in its own store, `store merge` folds them into the run
// store) gives the same table as the same sweep run on one store; merging again changes nothing.
#include "tests/torch_catch.h"

#include <filesystem>
#include <fstream>

#include "core/store/run_store.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {
// The table without its provenance (which names the store).
std::string table_rows(const CliResult& r) { return r.out.substr(0, r.out.find("### Provenance")); }
}  // namespace

TEST_CASE("A sweep run as shards and merged gives the table of the same sweep run on one store", "[e2e][sweep][merge]") {
  const std::string dir = scratch_dir("sweep_shards");
  write_micro_config(dir, 6);
  std::ofstream(dir + "/sweep.toml") << "name = \"seeds\"\nbase = \"micro.toml\"\nmode = \"list\"\nseeds = [1, 2]\n"
                                        "set = [\"train.eval_every=3\", \"train.warmup_steps=2\"]\n[[member]]\nset = [\"run.variant=dense\"]\n";
  std::ofstream(dir + "/table.toml") << "title = \"seeds\"\n[select]\nsweep = \"seeds\"\n[layout]\nrows = [\"run.variant\", "
                                        "\"train.seed\"]\n[[column]]\nmetric = \"train_end/val/loss\"\ndigits = 6\n";
  // One store, the local scheduler.
  auto plan = run_cli("sweep plan sweep.toml --store runs/one.db --no-estimate", dir);
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  const std::string id = std::to_string(std::stoll(plan.out));
  auto local = run_cli("sweep run " + id + " --store runs/one.db --workers 1 --threads 1", dir);
  INFO(local.err);
  REQUIRE(local.exit_code == 0);

  // Shards: the Slurm script's form, each task in its own process and store.
  REQUIRE(run_cli("sweep plan sweep.toml --store runs/main.db --no-estimate", dir).exit_code == 0);
  auto slurm = run_cli("sweep slurm 1 --store runs/main.db", dir);
  INFO(slurm.err);
  REQUIRE(slurm.exit_code == 0);
  const std::string script = file_text(slurm.out.substr(0, slurm.out.size() - 1));
  CHECK(script.find("--store '" + dir + "/runs/shards/1-'\"$SLURM_ARRAY_TASK_ID\".db") != std::string::npos);
  CHECK(script.find("store merge '" + dir + "/runs/shards'/1-*.db --into '" + dir + "/runs/main.db'") != std::string::npos);
  for (int task : {0, 1}) {
    REQUIRE(std::filesystem::exists(dir + "/runs/shards/1-" + std::to_string(task) + ".db"));
    auto r = run_cli("sweep run 1 --index " + std::to_string(task) + " --store runs/shards/1-" + std::to_string(task) +
                         ".db --threads 1",
                     dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
  auto merge = run_cli("store merge runs/shards/1-0.db runs/shards/1-1.db --into runs/main.db", dir);
  INFO(merge.err);
  REQUIRE(merge.exit_code == 0);
  CHECK(merge.err.find("merged runs/shards/1-1.db: 1 runs added, 0 updated, 0 unchanged; 0 sweeps added; 1 members updated") !=
        std::string::npos);
  RunStore main(dir + "/runs/main.db");
  for (const auto& m : main.sweep_members(1)) CHECK(m.status == "finished");

  auto one = run_cli("table table.toml --store runs/one.db --allow-mixed-builds", dir);
  auto merged = run_cli("table table.toml --store runs/main.db --allow-mixed-builds", dir);
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  REQUIRE(merged.exit_code == 0);
  CHECK(table_rows(merged) == table_rows(one));
  CHECK(table_rows(one).find("| dense | 1 |") != std::string::npos);

  auto again = run_cli("store merge runs/shards/1-0.db runs/shards/1-1.db --into runs/main.db", dir);
  CHECK(again.err.find("merged runs/shards/1-0.db: 0 runs added, 0 updated, 1 unchanged") != std::string::npos);
  CHECK(one_line_error(run_cli("store merge runs/shards/9-9.db --into runs/main.db", dir), "no shard store at runs/shards/9-9.db"));
}
