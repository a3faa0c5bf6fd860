// `moxlab convert tomoe --run ID | --checkpoint P --active 0.5 [--steps N] [--config BASE.toml] [--set key=value ...]
//  [--store DB] [--print-id]`
// Converts a dense checkpoint into a ToMoE MoE (experiments/runner/tomoe_convert.h): trains the routing
// modules by self-distillation on the checkpoint's data, then fixes the v/o top-K and records widths and
// active parameters; the result is a run in the store (named tomoe_target<p>) whose checkpoint
// `moxlab eval --run ID` evaluates. The last line says whether the measured active ratio reached p.
#include <iostream>
#include <memory>

#include "experiments/cli/cli_options.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/runner/tomoe_convert.h"

namespace moxlab::cli {

namespace {
struct ConvertArgs {
  CheckpointRef from;
  std::string store;
  TomoeConvertRequest request;
  bool print_id = false;
};
}  // namespace

void register_convert(CLI::App& app) {
  auto* convert = app.add_subcommand("convert", "Convert a dense model into a conditional one");
  convert->require_subcommand(1);
  auto a = std::make_shared<ConvertArgs>();
  auto& r = a->request;
  auto* cmd = convert->add_subcommand("tomoe", "ToMoE: a dense checkpoint into an MoE by dynamic structural pruning");
  add_checkpoint_options(cmd, a->from, "dense");
  cmd->add_option("--store", a->store, "run store where --run is found and the converted run is recorded "
                                       "(default: runs/runs.db for --run, the checkpoint's run.store)");
  cmd->add_option("--active", r.active, "target ratio p of active parameters (Eq. 8), in (0, 1]")->capture_default_str();
  cmd->add_option("--steps", r.steps, "optimiser steps of the routing modules (200 reach p; a few stay near 1)")
      ->check(positive_count())->capture_default_str();
  cmd->add_option("--config", r.base_config, "base TOML config (default: the checkpoint's own)")->check(non_empty_path());
  cmd->add_option("--set", r.sets, "key=value override (repeatable), applied last");
  add_print_id_flag(cmd, a->print_id);
  cmd->callback([a]() {
    if (!a->store.empty()) {
      a->from.store = a->store;
      a->request.sets.insert(a->request.sets.begin(), "run.store=" + a->store);
    }
    a->request.checkpoint = checkpoint_file(a->from);
    ForegroundTraining how;
    how.label = "convert";
    how.print_id = a->print_id;
    train_in_foreground(tomoe_convert_config(a->request), how);
  });
}

}  // namespace moxlab::cli
