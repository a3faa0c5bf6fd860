// `moxlab prune METHOD --run ID | --checkpoint P --active 0.5 [--calibration N] [--store DB] [--variant NAME]
//  [--print-id]`
// The static pruning baselines (core/prune/prune.h) as a new run; evaluate it with `moxlab eval --run ID`.
// In a sweep the same run is a member with prune.method / prune.active and train.init_from.
#include <iostream>
#include <memory>

#include "experiments/cli/cli_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/runner/prune_run.h"

namespace moxlab::cli {

namespace {
struct PruneArgs {
  CheckpointRef from;
  PruneRunOptions run;
  bool print_id = false;
};
}  // namespace

void register_prune(CLI::App& app) {
  auto a = std::make_shared<PruneArgs>();
  auto& o = a->run;
  auto* cmd = app.add_subcommand("prune", "Prune a dense checkpoint statically (ToMoE's baselines)");
  std::string methods;
  for (const auto& m : prune_methods()) methods += (methods.empty() ? "" : ", ") + m;
  cmd->add_option("method", o.prune.method, "one of: " + methods)->required();
  add_checkpoint_options(cmd, a->from, "dense");
  cmd->add_option("--active", o.prune.active, "target ratio of active attention/SwiGLU parameters, in (0, 1]")->capture_default_str();
  cmd->add_option("--calibration", o.prune.calibration, "calibration batches of training windows")
      ->check(positive_count())->capture_default_str();
  cmd->add_option("--store", o.store, "run store (default: runs/runs.db for --run, the checkpoint's run.store)");
  cmd->add_option("--variant", o.variant, "run.variant label (default METHOD_ACTIVE)");
  cmd->add_option("--threads", o.threads, "LibTorch threads (0: all cores)")->check(thread_count());
  add_print_id_flag(cmd, a->print_id);
  cmd->callback([a]() {
    auto& o = a->run;
    if (!o.store.empty()) a->from.store = o.store;
    o.checkpoint = checkpoint_file(a->from);
    o.log = [](const std::string& s) { std::cerr << s << "\n"; };
    const PruneRunResult r = run_pruning(o);
    summary_stream(a->print_id) << "run " << r.run_id << ": " << o.prune.method << " at active ratio " << r.prune.active_ratio
                                << "; checkpoint " << r.checkpoint << "\n";
    if (a->print_id) std::cout << r.run_id << "\n";
  });
}

}  // namespace moxlab::cli
