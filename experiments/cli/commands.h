// Registration of the CLI subcommands (one file each: cmd_<name>.cpp). A subcommand's callback runs
// during parse and throws moxlab::Error on bad input; main() turns that into one line and exit 1.
#pragma once
#include <CLI/CLI.hpp>

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

// Thrown by a callback to end the process with a specific exit status (after printing its own output).
struct ExitRequest {
  int code;
};

}  // namespace moxlab::cli
