// `moxlab sweep slurm ID`: an sbatch job-array script whose task i runs
// `moxlab sweep run ID --index i` — the same command a local worker runs, so Slurm only launches and
// the run store does the bookkeeping (no cluster manager here). By default the array lists only the
// members that are not finished, so resubmitting the script after a partial run finishes the rest.
//
// The run store is SQLite in WAL mode: every task must reach it through a local or POSIX-locking
// filesystem of one host (WAL does not work over NFS). For multi-node arrays keep the store on the node
// that runs the tasks, or run the array on one node.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/run_records.h"

namespace moxlab {

struct SlurmOptions {
  std::string exe;      // absolute moxlab executable
  std::string store;    // absolute run store
  std::string workdir;  // where the tasks start (the sweep's working directory)
  std::string log_dir;  // where slurm-%A_%a.log goes
  std::string partition, time = "04:00:00", mem, account;
  int cpus_per_task = 2;
  int gpus_per_task = 0;
  int max_parallel = 0;  // 0: no limit (%N throttle otherwise)
  bool all = false;      // include finished members too
};

// The script text; Error when no member is left to run.
std::string slurm_array_script(const SweepRecord& sweep, const std::vector<SweepMember>& members, const SlurmOptions& opt);

}  // namespace moxlab
