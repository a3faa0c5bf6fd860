#include "experiments/cli/rank_launcher.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "core/common/error.h"
#include "core/distributed/rank_env.h"

extern char** environ;

namespace moxlab::cli {

namespace {

volatile sig_atomic_t g_forward = 0;
void on_stop_signal(int sig) { g_forward = sig; }

pid_t spawn_rank(const std::string& exe, const std::vector<std::string>& args, int rank, int world, const std::string& rendezvous) {
  std::vector<std::string> env_vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    if (key != "RANK" && key != "WORLD_SIZE" && key != "LOCAL_RANK" && key != "MOXLAB_RENDEZVOUS_FILE") env_vars.push_back(kv);
  }
  env_vars.push_back("RANK=" + std::to_string(rank));
  env_vars.push_back("WORLD_SIZE=" + std::to_string(world));
  env_vars.push_back("LOCAL_RANK=" + std::to_string(rank));
  env_vars.push_back("MOXLAB_RENDEZVOUS_FILE=" + rendezvous);
  std::vector<char*> envp;
  for (auto& kv : env_vars) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_s{exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), envp.data());
  if (rc != 0) throw Error("cannot start rank " + std::to_string(rank) + " (" + exe + "): " + std::strerror(rc));
  return pid;
}

int status_code(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

}  // namespace

int launch_local_ranks(int nproc, const std::vector<std::string>& args) {
  require(nproc >= 1, "--nproc must be at least 1");
  require(!process_rank_env().distributed(), "--nproc starts the ranks itself; this process already is one (WORLD_SIZE > 1)");
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  require(!ec, "cannot find the moxlab executable (/proc/self/exe)");
  const std::string rendezvous =
      (std::filesystem::temp_directory_path() / ("moxlab-rendezvous-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(rendezvous, ec);
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);

  std::map<pid_t, int> running;  // pid -> rank
  for (int r = 0; r < nproc; ++r) running[spawn_rank(exe, args, r, nproc, rendezvous)] = r;
  int code = 0, rank0_code = 0;
  bool failed = false;
  auto failed_at = std::chrono::steady_clock::now();
  while (!running.empty()) {
    if (g_forward != 0) {  // a terminal's Ctrl-C reaches the ranks itself; a kill of this process does not
      for (const auto& [pid, rank] : running) ::kill(pid, g_forward);
      g_forward = 0;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      // A rank that died leaves the others failing at their next collective; one still waiting after a
      // minute (e.g. in data preparation) is stopped.
      if (failed && std::chrono::steady_clock::now() - failed_at > std::chrono::minutes(1))
        for (const auto& [p, rank] : running) ::kill(p, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const int rank = it->second, c = status_code(status);
    running.erase(it);
    if (rank == 0) rank0_code = c;
    if (c != 0) {
      std::fprintf(stderr, "moxlab: rank %d of %d ended with status %d\n", rank, nproc, c);
      if (!failed) {
        failed_at = std::chrono::steady_clock::now();
        code = c;
      }
      failed = true;
    }
  }
  std::filesystem::remove(rendezvous, ec);
  return rank0_code != 0 ? rank0_code : code;
}

}  // namespace moxlab::cli
