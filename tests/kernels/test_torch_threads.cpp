// set_torch_threads pins LibTorch's workers, one per allowed CPU, and leaves the calling thread free.
#include "tests/torch_catch.h"

#include <sched.h>

#include <cstdlib>

#include "kernels/runtime/torch_threads.h"
#include "kernels/runtime/row_parallel.h"

using namespace moxlab;

namespace {
int cpus_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  return CPU_COUNT(&set);
}
}  // namespace

TEST_CASE("set_torch_threads pins the workers and not the caller, unless OMP_PROC_BIND is set", "[threads]") {
  const int allowed = cpus_of_this_thread();
  if (allowed < 2 || std::getenv("OMP_PROC_BIND") || std::getenv("GOMP_CPU_AFFINITY")) {
    WARN("skipped: needs 2 CPUs and no OpenMP binding in the environment");
    return;
  }
  REQUIRE(set_torch_threads(2) == 2);
  CHECK(threads_pinned());
  std::vector<int> seen(2, 0);
  parallel_row_ranges(2, 1, [&](std::int64_t begin, std::int64_t) { seen[static_cast<std::size_t>(begin)] = cpus_of_this_thread(); });
  CHECK(seen[0] == allowed);  // the calling thread keeps its whole mask
  CHECK(seen[1] == 1);        // the worker runs on one CPU
  CHECK(cpus_of_this_thread() == allowed);

  setenv("OMP_PROC_BIND", "false", 1);
  CHECK(set_torch_threads(2) == 2);
  CHECK_FALSE(threads_pinned());
  parallel_row_ranges(2, 1, [&](std::int64_t begin, std::int64_t) { seen[static_cast<std::size_t>(begin)] = cpus_of_this_thread(); });
  CHECK(seen[1] == allowed);  // unpinned again
  unsetenv("OMP_PROC_BIND");
  CHECK(set_torch_threads(1) == 1);
  CHECK_FALSE(threads_pinned());  // one thread: nothing to pin
}
