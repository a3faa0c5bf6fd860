// Helpers for end-to-end tests: run the moxlab CLI as a subprocess, make a private scratch folder,
// and write the micro training config (real package text, a model small enough to train in seconds).
#pragma once
#include <string>

namespace moxlab::testing {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// The whole text of a file; empty when it is absent (a command that has not written it yet).
std::string file_text(const std::string& path);

// Runs `moxlab <args>` in dir (a shell command line; quote arguments yourself).
CliResult run_cli(const std::string& args, const std::string& dir);

// Starts `moxlab <args>` in dir (stdout to dir/a.out, stderr to dir/a.err), waits until a checkpoint
// exists (runs/*/checkpoint.pt) and the store runs/runs.db records it, or moxlab has ended, runs the
// shell command `action` ($pid is moxlab's process id, e.g. "kill -TERM $pid"), then waits for moxlab
// and writes its exit status to dir/a.rc. The file is written before its row: waiting for the file alone
// lets a loaded machine interrupt a run whose store has no checkpoint yet.
void interrupt_at_first_checkpoint(const std::string& args, const std::string& dir, const std::string& action);

// True when the command failed with exactly one line "moxlab: error: ..." containing needle.
bool one_line_error(const CliResult& r, const std::string& needle);

// Runs a shell command in dir with stdout and stderr to dir/out and dir/err; returns its exit status.
int shell(const std::string& cmd, const std::string& dir);

// A fresh folder for this test process.
std::string scratch_dir(const std::string& name);

// Writes micro.toml into dir: default corpus capped per domain, BPE 512, dim 64, 2 layers.
std::string write_micro_config(const std::string& dir, int max_steps);
// The same with its data cache and run folders named absolutely (dir/cache, dir/runs), for scripts that
// run from the source tree.
std::string write_micro_config_for_scripts(const std::string& dir, int max_steps);

// Writes micro.toml into dir, trains it for max_steps as the first run of dir/runs/runs.db and returns
// that run's checkpoint path (the dense start of conversion, pruning and continue-tuning tests); throws
// with the command's stderr when training fails.
std::string train_micro_checkpoint(const std::string& dir, int max_steps);

}  // namespace moxlab::testing
