#include "kernels/runtime/torch_threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>

#include "kernels/runtime/row_parallel.h"

namespace moxlab {

namespace {

std::atomic<bool> g_pinned{false};

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

bool should_pin(int n, const std::vector<int>& cpus) {
  return n >= 2 && static_cast<int>(cpus.size()) >= n && !std::getenv("OMP_PROC_BIND") && !std::getenv("GOMP_CPU_AFFINITY");
}

// Worker i (i >= 1) to cpus[i] alone, or back to all of cpus. One row per thread: thread i runs row i
// (parallel_row_ranges runs in moxlab's OpenMP-compiled code). False when a worker could not be set.
bool set_worker_affinity(int n, const std::vector<int>& cpus, bool pin) {
  std::atomic<bool> ok{true};
  parallel_row_ranges(n, 1, [&](std::int64_t begin, std::int64_t end) {
    if (end - begin != 1) return void(ok = false);
    if (begin == 0) return;  // the calling thread
    cpu_set_t set;
    CPU_ZERO(&set);
    if (pin)
      CPU_SET(cpus[static_cast<std::size_t>(begin)], &set);
    else
      for (int c : cpus) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) ok = false;
  });
  return ok;
}

}  // namespace

int set_torch_threads(int n) {
  if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(n);
  const int now = at::get_num_threads();
  const std::vector<int> cpus = allowed_cpus();
  const bool pin = should_pin(now, cpus);
  if (pin || g_pinned) g_pinned = set_worker_affinity(now, cpus, pin) && pin;
  return now;
}

bool threads_pinned() { return g_pinned; }

}  // namespace moxlab
