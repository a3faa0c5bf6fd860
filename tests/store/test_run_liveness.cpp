// A running run whose process is gone shows as killed, one that stopped beating as stale; the run row
// records its worker and heartbeat (schema 3), and a schema-2 store gains them in place.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/common/process_probe.h"
#include "core/store/run_liveness.h"
#include "core/store/run_store.h"
#include "tests/scratch_dir.h"

using namespace moxlab;

namespace {

// The pid of a child that has exited and been reaped: no process has it (until the kernel reuses it).
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

std::string this_host_worker(pid_t pid) {
  const std::string self = this_worker_id();
  return self.substr(0, self.rfind(':')) + ":" + std::to_string(pid);
}

RunRecord running_run(const std::string& worker, std::optional<double> heartbeat) {
  RunRecord r;
  r.status = RunStatus::running;
  r.worker = worker;
  r.heartbeat = heartbeat;
  return r;
}

}  // namespace

TEST_CASE("a running run is killed when its process on this host is gone, stale when it stops beating", "[store][liveness]") {
  const double now = unix_now();
  // This process: alive, with or without beats.
  CHECK(shown_status(running_run(this_worker_id(), now), now) == "running");
  CHECK(shown_status(running_run(this_worker_id(), std::nullopt), now) == "running");
  // A dead pid on this host: killed, whatever the heartbeat says.
  CHECK(run_liveness(running_run(this_host_worker(dead_pid()), now), now) == RunLiveness::gone);
  CHECK(shown_status(running_run(this_host_worker(dead_pid()), std::nullopt), now) == "killed");
  // A live pid that started after the worker's last beat is another process reusing the pid.
  const auto started = process_start_time(::getpid());
  REQUIRE(started);
  CHECK(*started <= now);
  CHECK(shown_status(running_run(this_worker_id(), *started - 60), now) == "killed");
  // Another host cannot be probed: the heartbeat decides, and a run that never beats stays running.
  CHECK(shown_status(running_run("other-node:1", now - 10), now) == "running");
  CHECK(shown_status(running_run("other-node:1", now - kStaleAfterSeconds - 1), now) == "stale");
  CHECK(shown_status(running_run("other-node:1", std::nullopt), now) == "running");
  // Runs recorded without a worker keep their stored status; settled runs are never re-judged.
  CHECK(shown_status(running_run("", std::nullopt), now) == "running");
  RunRecord done = running_run(this_host_worker(dead_pid()), now);
  done.status = RunStatus::finished;
  CHECK(run_liveness(done, now) == RunLiveness::settled);
  CHECK(shown_status(done, now) == "finished");
}

TEST_CASE("the run store records the worker of a running run and its heartbeat", "[store][liveness]") {
  testing::ScratchDir dir("liveness");
  RunStore store(dir.file("runs.db"));
  RunRecord r;
  r.status = RunStatus::running;
  const std::int64_t id = store.create_run(r);
  RunRecord got = store.get_run(id);
  CHECK(got.worker == this_worker_id());
  CHECK_FALSE(got.heartbeat);

  const double before = unix_now();
  CHECK(store.heartbeat_run(id));
  got = store.get_run(id);
  REQUIRE(got.heartbeat);
  CHECK(*got.heartbeat >= before);

  store.update_status(id, RunStatus::killed);
  CHECK_FALSE(store.heartbeat_run(id));  // no longer running
  {
    // A resume elsewhere takes the run over: the old worker's beats no longer land.
    SQLite::Database raw(dir.file("runs.db"), SQLite::OPEN_READWRITE);
    raw.exec("UPDATE runs SET worker = 'other-node:7', heartbeat = 1 WHERE id = " + std::to_string(id));
  }
  store.update_status(id, RunStatus::running);  // resuming here makes this process the worker again
  got = store.get_run(id);
  CHECK(got.worker == this_worker_id());
  CHECK_FALSE(got.heartbeat);
  {
    SQLite::Database raw(dir.file("runs.db"), SQLite::OPEN_READWRITE);
    raw.exec("UPDATE runs SET worker = 'other-node:7' WHERE id = " + std::to_string(id));
  }
  CHECK_FALSE(store.heartbeat_run(id));

  RunRecord pending;  // not created running: no worker
  CHECK(store.get_run(store.create_run(pending)).worker.empty());
}

TEST_CASE("a version-2 run store gains the run worker columns in place and stays readable read-only", "[store][liveness]") {
  testing::ScratchDir dir("liveness-migrate");
  const std::string path = dir.file("old.db");
  {
    RunStore store(path);
    RunRecord r;
    r.name = "old";
    r.status = RunStatus::running;
    store.create_run(r);
  }
  {
    // Back to the version-2 shape: the runs table without the version-3 columns.
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("ALTER TABLE runs DROP COLUMN worker");
    db.exec("ALTER TABLE runs DROP COLUMN heartbeat");
    db.exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'");
  }
  {
    RunStoreOptions ro;
    ro.read_only = true;
    RunStore reader(path, ro);  // read-only: not migrated, yet its runs read
    CHECK(reader.schema_version() == 2);
    const auto runs = reader.list_runs();
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].worker.empty());
    CHECK(shown_status(runs[0], unix_now()) == "running");  // no worker recorded: nothing to judge by
  }
  RunStore store(path);
  CHECK(store.schema_version() == 3);
  CHECK(store.get_run(1).name == "old");
  CHECK(store.get_run(1).worker.empty());
  RunRecord r;
  r.status = RunStatus::running;
  CHECK(store.get_run(store.create_run(r)).worker == this_worker_id());
}
