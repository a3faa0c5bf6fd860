// `moxlab prune METHOD --checkpoint P --active 0.5 [--calibration N] [--store DB] [--variant NAME]`
// The static pruning baselines (core/prune/prune.h) as a new run; evaluate it with `moxlab eval --run ID`.
// In a sweep the same run is a member with prune.method / prune.active and train.init_from.
#include <iostream>
#include <memory>

#include "experiments/cli/commands.h"
#include "experiments/runner/prune_run.h"

namespace moxlab::cli {

void register_prune(CLI::App& app) {
  auto o = std::make_shared<PruneRunOptions>();
  auto* cmd = app.add_subcommand("prune", "Prune a dense checkpoint statically (ToMoE's baselines)");
  std::string methods;
  for (const auto& m : prune_methods()) methods += (methods.empty() ? "" : ", ") + m;
  cmd->add_option("method", o->prune.method, "one of: " + methods)->required();
  cmd->add_option("--checkpoint", o->checkpoint, "dense checkpoint")->required();
  cmd->add_option("--active", o->prune.active, "target ratio of active attention/SwiGLU parameters")->capture_default_str();
  cmd->add_option("--calibration", o->prune.calibration, "calibration batches of training windows")->capture_default_str();
  cmd->add_option("--store", o->store, "run store (default: the checkpoint's)");
  cmd->add_option("--variant", o->variant, "run.variant label (default METHOD_ACTIVE)");
  cmd->add_option("--threads", o->threads, "LibTorch threads (0: all cores)");
  cmd->callback([o]() {
    o->log = [](const std::string& s) { std::cerr << s << "\n"; };
    const PruneRunResult r = run_pruning(*o);
    std::cout << "run " << r.run_id << ": " << o->prune.method << " at active ratio " << r.prune.active_ratio << "; checkpoint "
              << r.checkpoint << "\n";
  });
}

}  // namespace moxlab::cli
