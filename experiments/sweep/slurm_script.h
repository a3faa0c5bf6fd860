// `moxlab sweep slurm ID`: an sbatch job-array script whose task i runs
// `moxlab sweep run ID --index i` — the same command a local worker runs, so Slurm only launches and
// the run store does the bookkeeping (no cluster manager here). By default the array lists only the
// members that are not finished, so resubmitting the script after a partial run finishes the rest.
//
// The run store is SQLite in WAL mode, safe for many writers on one host only (WAL needs shared memory;
// SQLite warns against its locking over NFS). So by default the tasks do not share it: task i writes its
// own store, a shard (<shard dir>/<sweep id>-<i>.db, the sweep's plan copied in by `sweep slurm`), and
// `moxlab store merge <shard dir>/<sweep id>-*.db --into STORE` folds them into the run store after the
// array (core/store/store_merge.h). With an empty shard_dir every task opens the run store itself: only
// for arrays whose tasks all run on the host that holds the store.
//
// With ranks > 1 each task is a data-parallel member: `srun` starts that many ranks of the same
// `sweep run` (their RANK and WORLD_SIZE from SLURM_PROCID and SLURM_NTASKS, docs/data_parallel.md), the
// first host of the task's allocation is the rendezvous, and the two minutes' warning goes to every rank.
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
  int ranks = 1;         // data-parallel ranks per member (Slurm tasks of one array task)
  int max_parallel = 0;  // 0: no limit (%N throttle otherwise)
  bool all = false;      // include finished members too
  std::string shard_dir;  // task i writes shard_dir/<sweep id>-<i>.db ("" = every task opens `store`)
};

// Task i's shard store is shard_store_prefix(dir, sweep) + i + ".db", i.e. <dir>/<sweep id>-<i>.db.
std::string shard_store_prefix(const std::string& shard_dir, std::int64_t sweep);

// The script text; Error when no member is left to run.
std::string slurm_array_script(const SweepRecord& sweep, const std::vector<SweepMember>& members, const SlurmOptions& opt);

}  // namespace moxlab
