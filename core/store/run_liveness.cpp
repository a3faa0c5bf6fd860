#include "core/store/run_liveness.h"

#include <unistd.h>

#include "core/common/process_probe.h"

namespace moxlab {

namespace {
// A process that started this long after its worker's last sign of life is another process: the
// slack covers the boot time's one-second resolution and small steps of the wall clock (a false
// verdict would show a live run as killed until its next beat).
constexpr double kStartTimeSlackSeconds = 10;

std::string this_host() {
  const std::string h = host_name();
  return h.empty() ? "unknown-host" : h;
}
}  // namespace

std::string this_worker_id() { return this_host() + ":" + std::to_string(::getpid()); }

bool worker_process_gone(const std::string& worker, std::optional<double> seen_alive_at) {
  const auto colon = worker.rfind(':');
  if (colon == std::string::npos || worker.substr(0, colon) != this_host()) return false;
  long pid = 0;
  try {
    pid = std::stol(worker.substr(colon + 1));
  } catch (...) {
    return false;
  }
  if (pid <= 0) return false;
  if (!process_alive(static_cast<pid_t>(pid))) return true;
  if (!seen_alive_at) return false;
  const auto started = process_start_time(static_cast<pid_t>(pid));
  return started && *started > *seen_alive_at + kStartTimeSlackSeconds;
}

RunLiveness run_liveness(const RunRecord& run, double now, double stale_after_s) {
  if (run.status != RunStatus::running) return RunLiveness::settled;
  if (run.worker.empty()) return RunLiveness::alive;
  if (worker_process_gone(run.worker, run.heartbeat)) return RunLiveness::gone;
  if (run.heartbeat && now - *run.heartbeat > stale_after_s) return RunLiveness::stale;
  return RunLiveness::alive;
}

std::string shown_status(const RunRecord& run, double now) {
  switch (run_liveness(run, now)) {
    case RunLiveness::gone: return "killed";
    case RunLiveness::stale: return "stale";
    default: return to_string(run.status);
  }
}

}  // namespace moxlab
