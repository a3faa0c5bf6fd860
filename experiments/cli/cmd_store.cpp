// `moxlab store merge SHARD... --into STORE`: folds run-store shards (one per worker host, e.g. the
// Slurm array tasks of a multi-node sweep) into the main store, each shard in one transaction
// (core/store/store_merge.h). Merging a shard again changes nothing, so after any failure or kill the
// same command is simply run again.
#include <iostream>
#include <memory>
#include <vector>

#include "core/store/store_merge.h"
#include "experiments/cli/commands.h"

namespace moxlab::cli {

void register_store(CLI::App& app) {
  auto* store = app.add_subcommand("store", "Run-store maintenance: merge shards written on other hosts");
  store->require_subcommand(1);
  struct Args {
    std::vector<std::string> shards;
    std::string into;
  };
  auto a = std::make_shared<Args>();
  auto* merge = store->add_subcommand("merge", "Fold shard stores into a store (idempotent, one transaction per shard)");
  merge->add_option("shards", a->shards, "shard stores, merged in the order given")->required();
  merge->add_option("--into", a->into, "the store to merge into (created when missing)")->required();
  merge->callback([a]() {
    for (const auto& shard : a->shards) {
      const MergeReport report = merge_store(a->into, shard);
      std::cerr << "merged " << shard << ": " << merge_report_text(report) << "\n";
    }
  });
}

}  // namespace moxlab::cli
