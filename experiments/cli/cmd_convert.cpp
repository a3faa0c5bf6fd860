// `moxlab convert tomoe --checkpoint P --active 0.5 [--steps N] [--config BASE.toml] [--set key=value ...]`
// Converts a dense checkpoint into a ToMoE MoE (experiments/runner/tomoe_convert.h): trains the routing
// modules by self-distillation on the checkpoint's data, then fixes the v/o top-K and records widths and
// active parameters; the result is a run in the store whose checkpoint `moxlab eval --run ID` evaluates.
#include <iostream>
#include <memory>

#include "experiments/cli/commands.h"
#include "experiments/runner/tomoe_convert.h"

namespace moxlab::cli {

void register_convert(CLI::App& app) {
  auto* convert = app.add_subcommand("convert", "Convert a dense model into a conditional one");
  convert->require_subcommand(1);
  auto r = std::make_shared<TomoeConvertRequest>();
  auto* cmd = convert->add_subcommand("tomoe", "ToMoE: a dense checkpoint into an MoE by dynamic structural pruning");
  cmd->add_option("--checkpoint", r->checkpoint, "dense checkpoint")->required();
  cmd->add_option("--active", r->active, "target ratio p of active parameters (Eq. 8)")->capture_default_str();
  cmd->add_option("--steps", r->steps, "optimiser steps of the routing modules")->capture_default_str();
  cmd->add_option("--config", r->base_config, "base TOML config (default: the checkpoint's own)");
  cmd->add_option("--set", r->sets, "key=value override (repeatable), applied last");
  cmd->callback([r]() { train_in_foreground(tomoe_convert_config(*r)); });
}

}  // namespace moxlab::cli
