#include "experiments/sweep/sweep_scheduler.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/store/run_store.h"

extern char** environ;

namespace moxlab {

namespace {

struct Worker {
  int idx;
  std::string label;
  std::chrono::steady_clock::time_point started;
};

pid_t spawn_worker(const SchedulerOptions& o, int idx, int threads) {
  std::vector<std::string> args = {o.exe, "sweep", "run", std::to_string(o.sweep), "--index", std::to_string(idx),
                                   "--store", o.store, "--threads", std::to_string(threads),
                                   "--stale-after", std::to_string(o.policy.stale_after_s)};
  if (o.policy.retry_failed) args.push_back("--retry-failed");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::string log = o.log_dir + "/member-" + std::to_string(idx) + ".log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, o.exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error("cannot start a sweep worker (" + o.exe + "): " + std::strerror(rc));
  return pid;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

std::string worker_id_of(pid_t pid) {
  const std::string self = this_worker_id();
  return self.substr(0, self.rfind(':')) + ":" + std::to_string(pid);
}

}  // namespace

int auto_worker_threads(int cores, int running, int free_left) {
  const int concurrent = std::max(1, std::min(cores, running + free_left));
  return std::max(1, cores / concurrent);
}

SchedulerSummary run_sweep_workers(const SchedulerOptions& o) {
  require(o.workers >= 1, "--workers must be at least 1");
  auto log = [&](const std::string& s) { if (o.log) o.log(s); };
  make_dirs(o.log_dir);
  RunStore store(o.store);
  std::map<pid_t, Worker> running;
  std::set<int> dispatched;  // members started by this scheduler (never started twice here)
  SchedulerSummary summary;
  bool forwarded = false;

  for (;;) {
    const bool stopping = o.stop && *o.stop;
    if (stopping && !forwarded) {
      log("stopping: asking " + std::to_string(running.size()) + " worker(s) to checkpoint");
      for (const auto& [pid, w] : running) ::kill(pid, SIGTERM);
      forwarded = true;
      summary.stopped = true;
    }
    if (!stopping) {
      const auto members = store.sweep_members(o.sweep);
      const double now = unix_now();
      auto startable = [&](const SweepMember& m) {
        return !dispatched.count(m.idx) && member_availability(m, o.policy, now) == MemberAvailability::free;
      };
      int free_left = static_cast<int>(std::count_if(members.begin(), members.end(), startable));
      for (const auto& m : members) {
        if (static_cast<int>(running.size()) >= o.workers) break;
        if (!startable(m)) continue;
        const int threads = o.threads_per_worker > 0 ? o.threads_per_worker
                                                     : auto_worker_threads(o.cores, static_cast<int>(running.size()), free_left);
        const pid_t pid = spawn_worker(o, m.idx, threads);
        --free_left;
        dispatched.insert(m.idx);
        running[pid] = {m.idx, m.label, std::chrono::steady_clock::now()};
        log("member " + std::to_string(m.idx) + " (" + m.label + ") started: pid " + std::to_string(pid) + ", " +
            std::to_string(threads) + " thread(s)");
      }
    }
    if (running.empty()) break;

    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const Worker w = it->second;
    running.erase(it);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - w.started).count();
    SweepMember m = store.sweep_member(o.sweep, w.idx);
    // A worker that died without recording an outcome (crash, OOM kill) leaves its member running.
    if (m.status == "running" && m.worker == worker_id_of(pid)) {
      store.finish_sweep_member(o.sweep, w.idx, m.worker, "failed", "worker " + describe_exit(status));
      m = store.sweep_member(o.sweep, w.idx);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitMemberUnavailable) ++summary.unavailable;
    else if (m.status == "finished") ++summary.finished;
    else if (m.status == "killed") ++summary.killed;
    else ++summary.failed;
    std::string line = "member " + std::to_string(w.idx) + " " + m.status + " after " + std::to_string(static_cast<int>(secs)) + " s";
    if (m.run_id) line += " (run " + std::to_string(*m.run_id) + ")";
    if (!m.error.empty()) line += ": " + m.error;
    log(line);
  }
  return summary;
}

}  // namespace moxlab
