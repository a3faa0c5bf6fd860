// Registration of the CLI subcommands (one file each: cmd_<name>.cpp). A subcommand's callback runs
// during parse and throws moxlab::Error on bad input; main() turns that into one line and exit 1.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace moxlab {
struct Config;
}

namespace moxlab::cli {

void register_all(CLI::App& app);

void register_config(CLI::App& app);
void register_train(CLI::App& app);
void register_generate(CLI::App& app);
void register_import(CLI::App& app);
void register_export(CLI::App& app);
void register_eval(CLI::App& app);
void register_capture(CLI::App& app);
void register_observe(CLI::App& app);
void register_route(CLI::App& app);
void register_runs(CLI::App& app);
void register_bench(CLI::App& app);
void register_table(CLI::App& app);
void register_scorecard(CLI::App& app);
void register_sweep(CLI::App& app);
void register_convert(CLI::App& app);
void register_prune(CLI::App& app);
void register_store(CLI::App& app);

// How train_in_foreground runs and reports a training.
struct ForegroundTraining {
  bool resume = false;           // continue the newest unfinished run of this config
  std::int64_t resume_run = -1;  // ... or this one
  std::string label = "train";   // of the progress bar
  bool print_id = false;         // stdout: the run id only (cli_options.h)
};

// Trains cfg in this process with a progress bar; SIGINT/SIGTERM stop after the current step with a
// checkpoint. A ToMoE conversion ends with a line saying whether it reached its target active ratio.
void train_in_foreground(const Config& cfg, const ForegroundTraining& how = {});

// Thrown by a callback to end the process with a specific exit status (after printing its own output).
struct ExitRequest {
  int code;
};

}  // namespace moxlab::cli
