// `moxlab sweep run ID --workers N`: keeps N worker processes busy on the sweep's free members. Each
// worker is a fresh `moxlab sweep run ID --index K` process (the very command a Slurm array task runs),
// so a crash in one member cannot take the others down, and every member takes itself in the store
// by compare-and-set: several schedulers, or a scheduler next to a Slurm array, never run a member twice.
// A stop request (SIGINT/SIGTERM) is forwarded to the workers, which checkpoint and mark their members
// killed; running the command again resumes them. Worker output goes to <log_dir>/member-K.log.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "experiments/sweep/member_claim.h"

namespace moxlab {

struct SchedulerOptions {
  std::string exe;    // the moxlab executable
  std::string store;  // absolute run store path
  std::int64_t sweep = -1;
  int workers = 1;
  int threads_per_worker = 1;
  ClaimPolicy policy;
  std::string log_dir;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> log;
};

struct SchedulerSummary {
  int finished = 0, failed = 0, killed = 0, unavailable = 0;  // outcomes of the workers started here
  bool stopped = false;                                       // a stop request ended it
};

SchedulerSummary run_sweep_workers(const SchedulerOptions& opts);

}  // namespace moxlab
