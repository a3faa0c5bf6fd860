#include "experiments/sweep/member_claim.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace moxlab {

namespace {
std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown-host";
  return buf;
}
}  // namespace

std::string this_worker_id() { return host_name() + ":" + std::to_string(::getpid()); }

bool worker_process_gone(const std::string& worker) {
  const auto colon = worker.rfind(':');
  if (colon == std::string::npos || worker.substr(0, colon) != host_name()) return false;
  long pid = 0;
  try {
    pid = std::stol(worker.substr(colon + 1));
  } catch (...) {
    return false;
  }
  if (pid <= 0) return false;
  // kill(pid, 0) probes existence without signalling; EPERM means it exists under another user.
  if (::kill(static_cast<pid_t>(pid), 0) != 0) return errno == ESRCH;
  // A killed worker whose parent died too stays a zombie until someone reaps it (in containers PID 1
  // often never does): it exists for kill() but will never write again.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

MemberAvailability member_availability(const SweepMember& m, const ClaimPolicy& policy, double now) {
  if (m.status == "finished") return MemberAvailability::finished;
  if (m.status == "pending" || m.status == "killed") return MemberAvailability::free;
  if (m.status == "failed") return policy.retry_failed ? MemberAvailability::free : MemberAvailability::failed;
  // running
  if (worker_process_gone(m.worker)) return MemberAvailability::free;
  const bool stale = !m.heartbeat || now - *m.heartbeat > policy.stale_after_s;
  return stale ? MemberAvailability::free : MemberAvailability::held;
}

}  // namespace moxlab
