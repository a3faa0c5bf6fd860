// Who may take a sweep member. A member is free when pending or killed (stopped by a signal: it
// resumes from its checkpoint), failed only when retrying is asked for, and running only when its
// worker is gone: on this host a dead pid, anywhere a heartbeat older than stale_after_s (a Slurm
// task on another node cannot be probed by pid, and a reused pid cannot keep a member forever).
#pragma once
#include <string>

#include "core/store/run_liveness.h"  // this_worker_id, worker_process_gone, kHeartbeatSeconds
#include "core/store/run_records.h"

namespace moxlab {

struct ClaimPolicy {
  bool retry_failed = false;
  double stale_after_s = kStaleAfterSeconds;  // workers heartbeat every kHeartbeatSeconds
};

// Exit status of `moxlab sweep run ID --index K` when the member is held elsewhere or not retried.
constexpr int kExitMemberUnavailable = 3;

enum class MemberAvailability { free, finished, failed, held };

// Whether the member may be taken now (now: Unix seconds).
MemberAvailability member_availability(const SweepMember& m, const ClaimPolicy& policy, double now);

}  // namespace moxlab
