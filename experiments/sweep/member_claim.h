// Who may take a sweep member. A member is free when pending or killed (stopped by a signal: it
// resumes from its checkpoint), failed only when retrying is asked for, and running only when its
// worker is gone: on this host a dead pid, anywhere a heartbeat older than stale_after_s (a Slurm
// task on another node cannot be probed by pid, and a reused pid cannot keep a member forever).
#pragma once
#include <string>

#include "core/store/run_records.h"

namespace moxlab {

// "host:pid" of this process: the worker id written into the members it holds.
std::string this_worker_id();

struct ClaimPolicy {
  bool retry_failed = false;
  double stale_after_s = 300;  // workers heartbeat every kHeartbeatSeconds
};

constexpr double kHeartbeatSeconds = 30;

// Exit status of `moxlab sweep run ID --index K` when the member is held elsewhere or not retried.
constexpr int kExitMemberUnavailable = 3;

enum class MemberAvailability { free, finished, failed, held };

// Whether the member may be taken now (now: Unix seconds).
MemberAvailability member_availability(const SweepMember& m, const ClaimPolicy& policy, double now);

// True when `worker` ("host:pid") is this host and no process has that pid.
bool worker_process_gone(const std::string& worker);

}  // namespace moxlab
