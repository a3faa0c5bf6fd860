// Runs an import in a forked child (tests/mutation/isolated_run.h) with one LibTorch thread and a cap
// on its address space, so a loader that believes a corrupted header and allocates without bound ends
// as an error in the child instead of swapping a shared machine. The calling test must not have done
// LibTorch work before (see isolated_run.h): every import of these tests runs in a child.
#pragma once
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <functional>

#include <ATen/Parallel.h>

#include "tests/mutation/isolated_run.h"

namespace moxlab::testing {

inline IsolatedResult isolated_import(const std::function<void()>& body, double timeout_s = 10.0) {
  return run_isolated(
      [&] {
        // Catch2's handlers, inherited from the test process, would report a crash of the child as the
        // parent's test failing; the default action lets the parent see the signal and count a crash.
        for (int sig : {SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
        long pages = 0;
        std::ifstream("/proc/self/statm") >> pages;  // current virtual size: LibTorch maps a lot up front
        const rlim_t cap = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{4} << 30);
        const rlimit lim{cap, cap};
        ::setrlimit(RLIMIT_AS, &lim);
        at::set_num_threads(1);
        body();
      },
      timeout_s);
}

}  // namespace moxlab::testing
