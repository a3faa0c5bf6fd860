// Registration of the CLI subcommands (one file each: cmd_<name>.cpp). A subcommand's callback runs
// during parse and throws moxlab::Error on bad input; main() turns that into one line and exit 1.
#pragma once
#include <CLI/CLI.hpp>

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
void register_probe(CLI::App& app);
void register_observe(CLI::App& app);
void register_route(CLI::App& app);
void register_runs(CLI::App& app);
void register_bench(CLI::App& app);
void register_table(CLI::App& app);
void register_sweep(CLI::App& app);
void register_convert(CLI::App& app);
void register_prune(CLI::App& app);

// Trains cfg in this process with a progress bar; SIGINT/SIGTERM stop after the current step with a
// checkpoint. resume: continue the newest unfinished run of this config (or resume_run >= 0).
void train_in_foreground(const Config& cfg, bool resume = false, std::int64_t resume_run = -1);

// Thrown by a callback to end the process with a specific exit status (after printing its own output).
struct ExitRequest {
  int code;
};

}  // namespace moxlab::cli
