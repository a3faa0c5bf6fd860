// experiments/sweep/sweep_scheduler.h: `--workers auto`'s threads per worker (hand-computed cases on 2 and
// 16 cores: a worker per core while members last, the idle cores to the sweep's last workers).
#include <catch2/catch.hpp>

#include "experiments/sweep/sweep_scheduler.h"

using namespace moxlab;

TEST_CASE("sweep run --workers auto: one thread per worker while members last, idle cores to the last ones", "[sweep]") {
  // 2 cores: 8 free members, none running -> 1 thread each; the last member alone -> both cores.
  CHECK(auto_worker_threads(2, 0, 8) == 1);
  CHECK(auto_worker_threads(2, 1, 7) == 1);
  CHECK(auto_worker_threads(2, 0, 1) == 2);
  CHECK(auto_worker_threads(2, 1, 1) == 1);  // another still running: the cores are shared
  // 16 cores: 3 members -> 5 threads each (16 / 3), 2 -> 8, 1 -> 16; more members than cores -> 1.
  CHECK(auto_worker_threads(16, 0, 3) == 5);
  CHECK(auto_worker_threads(16, 0, 2) == 8);
  CHECK(auto_worker_threads(16, 0, 1) == 16);
  CHECK(auto_worker_threads(16, 4, 40) == 1);
  // Never below one thread, whatever the counts.
  CHECK(auto_worker_threads(1, 0, 0) == 1);
  CHECK(auto_worker_threads(2, 5, 0) == 1);
}
