// Runs one loader call in a forked child with a time limit and says how it ended, in the categories of
// the reliability audit: accepted (returned), clean error (threw moxlab::Error, a line naming the
// problem), unclear error (any other exception: std::bad_alloc, a JSON or LibTorch message that does not
// name the file), crash (a signal) or hang (killed at the limit). A crash inside a C library (libhdf5) then fails the test instead of killing the runner.
// The parent must not have started OpenMP/LibTorch worker threads before forking (a forked OpenMP pool
// deadlocks); each Catch2 test case runs in its own process under ctest, so forking from a test's
// first lines is safe.
#pragma once
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <thread>

#include "core/common/error.h"

namespace moxlab::testing {

enum class Outcome { accepted, clean_error, unclear_error, crash, hang };

inline const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::accepted: return "accepted";
    case Outcome::clean_error: return "clean error";
    case Outcome::unclear_error: return "unclear error";
    case Outcome::crash: return "crash";
    default: return "hang";
  }
}

struct IsolatedResult {
  Outcome outcome = Outcome::accepted;
  std::string message;  // the error line, the signal or "over N s"
};

inline IsolatedResult run_isolated(const std::function<void()>& body, double timeout_s = 20.0) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(pipe_fds[0]);
    int code = 0;
    std::string msg;
    try {
      body();
    } catch (const moxlab::Error& e) {
      code = 1;
      msg = e.what();
    } catch (const std::exception& e) {
      code = 2;
      msg = std::string("not a moxlab::Error: ") + e.what();
    } catch (...) {
      code = 2;
      msg = "a throw of a non-exception";
    }
    if (!msg.empty()) (void)!::write(pipe_fds[1], msg.data(), msg.size());
    ::_exit(code);  // no atexit handlers: libhdf5's would print its close-down noise again
  }
  ::close(pipe_fds[1]);
  IsolatedResult r;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ::close(pipe_fds[0]);
      return {Outcome::hang, "over " + std::to_string(timeout_s) + " s"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  char buf[4096];
  ssize_t got;
  while ((got = ::read(pipe_fds[0], buf, sizeof(buf))) > 0) r.message.append(buf, static_cast<std::size_t>(got));
  ::close(pipe_fds[0]);
  if (WIFSIGNALED(status)) return {Outcome::crash, std::string("signal ") + ::strsignal(WTERMSIG(status))};
  const int code = WEXITSTATUS(status);
  r.outcome = code == 0 ? Outcome::accepted : code == 1 ? Outcome::clean_error : Outcome::unclear_error;
  return r;
}

// Counts of each outcome over a set of mutants, and the first failure of each bad kind for the report.
struct OutcomeTally {
  int accepted = 0, clean_error = 0, unclear_error = 0, crash = 0, hang = 0;
  std::string first_unclear, first_crash, first_hang;
  void add(const IsolatedResult& r, const std::string& how) {
    switch (r.outcome) {
      case Outcome::accepted: ++accepted; break;
      case Outcome::clean_error: ++clean_error; break;
      case Outcome::unclear_error: if (unclear_error++ == 0) first_unclear = how + ": " + r.message; break;
      case Outcome::crash: if (crash++ == 0) first_crash = how + ": " + r.message; break;
      case Outcome::hang: if (hang++ == 0) first_hang = how + ": " + r.message; break;
    }
  }
  int total() const { return accepted + clean_error + unclear_error + crash + hang; }
  std::string summary(const std::string& what) const {
    return what + ": " + std::to_string(total()) + " mutants, " + std::to_string(clean_error) + " clean errors, " +
           std::to_string(accepted) + " accepted, " + std::to_string(unclear_error) + " unclear errors, " +
           std::to_string(crash) + " crashes, " + std::to_string(hang) + " hangs" +
           (unclear_error ? " (first unclear: " + first_unclear + ")" : "") +
           (crash ? " (first crash: " + first_crash + ")" : "") + (hang ? " (first hang: " + first_hang + ")" : "");
  }
};

}  // namespace moxlab::testing
