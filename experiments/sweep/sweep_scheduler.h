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
  int threads_per_worker = 1;  // 0: each worker its share of `cores` when it starts (auto_worker_threads)
  int cores = 1;
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

// `sweep run --workers auto`: one single-thread worker per core while the sweep has members for them,
// since two 1-thread trainings outrun one 2-thread training in aggregate (1.17x for the tiny preset, 1.09x
// for small, on the 2-core machine: docs/decisions/2026-11-27-sweep-workers-auto.md); the workers that
// start when fewer members are left than cores take the idle cores as threads. The threads of a worker
// starting with `running` workers busy and `free_left` free members (this one included).
int auto_worker_threads(int cores, int running, int free_left);

}  // namespace moxlab
