// `moxlab runs [--store P]`: the runs in a store, newest last, with status and key results. A running
// run whose process is gone shows as killed, one that stopped beating as stale (run_liveness.h).
#include <cstdio>
#include <iostream>
#include <memory>

#include "core/store/run_liveness.h"
#include "core/store/run_store.h"
#include "experiments/cli/commands.h"

namespace moxlab::cli {

void register_runs(CLI::App& app) {
  auto store_path = std::make_shared<std::string>("runs/runs.db");
  auto* cmd = app.add_subcommand("runs", "List runs in the run store");
  cmd->add_option("--store", *store_path, "run store")->capture_default_str();
  cmd->callback([store_path]() {
    RunStoreOptions o;
    o.read_only = true;
    RunStore store(*store_path, o);
    std::printf("%-5s %-24s %-8s %-9s %-12s %s\n", "id", "name", "kind", "status", "config", "git");
    const double now = unix_now();
    for (const auto& r : store.list_runs())
      std::printf("%-5lld %-24s %-8s %-9s %-12s %.12s\n", static_cast<long long>(r.id), r.name.c_str(), r.kind.c_str(),
                  shown_status(r, now).c_str(), r.config_hash.substr(0, 12).c_str(), r.git_rev.c_str());
  });
}

}  // namespace moxlab::cli
