// Options several subcommands share, declared once: which checkpoint a command reads (`--run ID` or
// `--checkpoint PATH`) and `--print-id` for scripts that capture the id of the run a command creates.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <ostream>
#include <string>

#include "experiments/runner/checkpoint_ref.h"

namespace moxlab::cli {

// Adds `--run ID` and `--checkpoint PATH` (mutually exclusive) bound to ref; `what` says whose
// checkpoint it is in the help ("dense", "ToMoE run's").
void add_checkpoint_options(CLI::App* cmd, CheckpointRef& ref, const std::string& what);

// The checkpoint file ref names: the run's newest checkpoint in ref.store, or ref.checkpoint.
std::string checkpoint_file(const CheckpointRef& ref);

// `--print-id`: stdout carries only the id of the run the command creates (ID=$(moxlab train ...
// --print-id)); what the command would print there goes to stderr instead.
void add_print_id_flag(CLI::App* cmd, bool& print_id);
std::ostream& summary_stream(bool print_id);

}  // namespace moxlab::cli
