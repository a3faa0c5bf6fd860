// The viewer's run catalog shows a running run whose process is gone as killed, and one that stopped
// beating as stale, including when the process dies while the store does not change at all.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/store/run_liveness.h"
#include "core/store/run_store.h"
#include "tests/scratch_dir.h"
#include "viewer/model/run_catalog.h"

using namespace moxlab;
using namespace moxlab::viewer;

namespace {
std::string worker_on_this_host(pid_t pid) {
  const std::string self = this_worker_id();
  return self.substr(0, self.rfind(':')) + ":" + std::to_string(pid);
}
}  // namespace

TEST_CASE("run catalog: a running run whose process died shows killed, a silent one stale", "[viewer][catalog]") {
  moxlab::testing::ScratchDir dir("catalog-liveness");
  const std::string db = dir.file("runs.db");
  const pid_t trainer = ::fork();  // stands in for a training process
  if (trainer == 0) {
    ::pause();
    ::_exit(0);
  }
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);

  std::int64_t live, dead, silent;
  {
    RunStore store(db);
    RunRecord r;
    r.status = RunStatus::running;
    r.worker = worker_on_this_host(trainer);
    live = store.create_run(r);
    r.worker = worker_on_this_host(gone);
    dead = store.create_run(r);
    r.worker = "some-other-node:42";
    r.heartbeat = unix_now() - 2 * kStaleAfterSeconds;
    silent = store.create_run(r);
  }
  RunCatalog cat(db);
  REQUIRE(cat.refresh());
  REQUIRE(cat.error().empty());
  CHECK(cat.find(live)->status == "running");
  CHECK(RunCatalog::field(*cat.find(dead), "status") == "killed");
  CHECK(cat.find(dead)->text.find("killed") != std::string::npos);
  CHECK(cat.find(silent)->status == "stale");
  CHECK(cat.find(dead)->run.status == RunStatus::running);  // shown, not written

  for (int i = 0; i < 5 && cat.refresh(); ++i) {
  }  // settled: the store no longer changes
  ::kill(trainer, SIGKILL);
  ::waitpid(trainer, nullptr, 0);
  CHECK(cat.refresh());  // the store is as it was, yet the process behind a run is gone
  CHECK(cat.find(live)->status == "killed");
  CHECK_FALSE(cat.refresh());
}
