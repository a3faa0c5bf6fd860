// Whether the process behind a `running` row still lives. A process that holds a run (or a sweep
// member) records itself as its worker, "host:pid", and may beat a heartbeat (Unix seconds) every
// kHeartbeatSeconds. On this host a dead pid is certain: the run was killed (kill -9, the OOM killer,
// a crash). On another host the pid cannot be probed, so only a heartbeat older than
// kStaleAfterSeconds says something: the run is stale (its process is probably gone, or hung).
//
// The verdict is shown, never written: `moxlab runs` and the viewer open the store read-only (it may
// be an archive or another user's), and a verdict about another host is a guess that a late
// heartbeat can still refute. `train --resume` (or a sweep worker) is what moves such a run on.
#pragma once
#include <optional>
#include <string>

#include "core/store/run_records.h"

namespace moxlab {

constexpr double kHeartbeatSeconds = 30;
constexpr double kStaleAfterSeconds = 300;  // ten missed beats

// "host:pid" of this process.
std::string this_worker_id();

// True when `worker` ("host:pid") is on this host and its process is gone: no such pid, a zombie, or
// a pid that a later process reuses (it started after seen_alive_at, when the worker last showed life).
bool worker_process_gone(const std::string& worker, std::optional<double> seen_alive_at = std::nullopt);

enum class RunLiveness {
  settled,  // not running: the stored status is the truth
  alive,    // running, and its process lives (or its host cannot be probed and it beat recently)
  gone,     // running, but its process on this host is gone
  stale,    // running, but no heartbeat for stale_after_s
};

// Runs without a worker (written before workers were recorded) count as alive. Runs whose process
// does not beat (heartbeat unset) are judged by their pid only.
RunLiveness run_liveness(const RunRecord& run, double now, double stale_after_s = kStaleAfterSeconds);

// The status to show for a run: the stored one, or "killed" when its process is gone and "stale"
// when it has stopped beating.
std::string shown_status(const RunRecord& run, double now);

}  // namespace moxlab
