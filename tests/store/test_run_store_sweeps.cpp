// RunStore sweeps: members are planned in one transaction, taken by compare-and-set (two workers never
// hold the same member), and a worker that lost its member can no longer write to it. A version-1
// store (before member configs existed) migrates in place.
#include <catch2/catch.hpp>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/run_store.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {
std::vector<SweepMember> planned(int n) {
  std::vector<SweepMember> out(n);
  for (int i = 0; i < n; ++i) {
    out[i].label = "train.lr=" + std::to_string(i);
    out[i].config_json = R"({"train":{"lr":)" + std::to_string(i) + "}}";
  }
  return out;
}
}  // namespace

TEST_CASE("sweep members are planned atomically and read back in order", "[store][sweep]") {
  testing::ScratchDir dir("sweep-plan");
  RunStore store(dir.file("runs.db"));
  const auto id = store.create_sweep("lr", R"({"axes":1})", planned(3));
  const auto members = store.sweep_members(id);
  REQUIRE(members.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(members[i].idx == i);
    CHECK(members[i].sweep_id == id);
    CHECK(members[i].status == "pending");
    CHECK(members[i].label == "train.lr=" + std::to_string(i));
    CHECK(members[i].attempts == 0);
    CHECK_FALSE(members[i].run_id);
  }
  CHECK(store.list_sweeps().size() == 1);
  CHECK_THROWS_WITH(store.sweep_member(id, 7), Contains("no member 7 of sweep"));

  // A member with invalid JSON aborts the whole plan: no sweep row is left behind.
  auto bad = planned(2);
  bad[1].config_json = "{oops";
  CHECK_THROWS_WITH(store.create_sweep("bad", "{}", bad), Contains("not valid JSON"));
  CHECK(store.list_sweeps().size() == 1);
}

TEST_CASE("claiming a sweep member is compare-and-set on status and worker", "[store][sweep]") {
  testing::ScratchDir dir("sweep-claim");
  RunStore a(dir.file("runs.db")), b(dir.file("runs.db"));  // two workers, two connections
  const auto id = a.create_sweep("s", "{}", planned(2));

  CHECK(a.claim_sweep_member(id, 0, "pending", "", "host:1"));
  CHECK_FALSE(b.claim_sweep_member(id, 0, "pending", "", "host:2"));  // b read a stale state
  SweepMember m = b.sweep_member(id, 0);
  CHECK(m.status == "running");
  CHECK(m.worker == "host:1");
  CHECK(m.attempts == 1);
  REQUIRE(m.heartbeat);
  REQUIRE(m.started_at);

  RunRecord run;
  run.name = "s.0";
  run.kind = "train";
  const auto run_id = a.create_run(run);
  CHECK(a.set_sweep_member_run(id, 0, "host:1", run_id));
  CHECK(a.heartbeat_sweep_member(id, 0, "host:1"));
  CHECK_FALSE(b.heartbeat_sweep_member(id, 0, "host:2"));  // not b's member
  CHECK_FALSE(b.finish_sweep_member(id, 0, "host:2", "finished"));
  CHECK(a.finish_sweep_member(id, 0, "host:1", "killed", "stopped by signal"));
  m = a.sweep_member(id, 0);
  CHECK(m.status == "killed");
  CHECK(m.error == "stopped by signal");
  CHECK(m.run_id == run_id);
  REQUIRE(m.finished_at);
  CHECK_FALSE(a.heartbeat_sweep_member(id, 0, "host:1"));  // no longer running

  // Taking over a killed member: b must name the state it saw.
  CHECK_FALSE(b.claim_sweep_member(id, 0, "pending", "", "host:2"));
  CHECK(b.claim_sweep_member(id, 0, "killed", "host:1", "host:2"));
  m = b.sweep_member(id, 0);
  CHECK(m.attempts == 2);
  CHECK(m.error.empty());
  CHECK_FALSE(m.finished_at);
  CHECK(m.run_id == run_id);  // the run to resume stays
  CHECK_FALSE(a.finish_sweep_member(id, 0, "host:1", "finished"));  // the old worker lost it
  CHECK(b.finish_sweep_member(id, 0, "host:2", "finished"));
  CHECK_THROWS_WITH(b.finish_sweep_member(id, 1, "host:2", "running"), Contains("cannot finish with status"));
}

TEST_CASE("a version-1 run store gains the sweep member columns in place", "[store][sweep]") {
  testing::ScratchDir dir("sweep-migrate");
  const std::string path = dir.file("old.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(R"sql(
      CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO meta VALUES('schema_version', '1');
      CREATE TABLE sweeps(id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
                          spec_json TEXT NOT NULL DEFAULT '{}', created_at REAL NOT NULL);
      CREATE TABLE sweep_members(sweep_id INTEGER NOT NULL, idx INTEGER NOT NULL, run_id INTEGER,
                                 status TEXT NOT NULL DEFAULT 'pending', PRIMARY KEY(sweep_id, idx));
      INSERT INTO sweeps VALUES(1, 'old', '{}', 0);
      INSERT INTO sweep_members VALUES(1, 0, NULL, 'pending');
    )sql");
  }
  RunStore store(path);
  CHECK(store.schema_version() == 3);
  const auto members = store.sweep_members(1);
  REQUIRE(members.size() == 1);
  CHECK(members[0].config_json == "{}");
  CHECK(members[0].attempts == 0);
  CHECK(store.claim_sweep_member(1, 0, "pending", "", "h:1"));
  CHECK(store.list_runs().empty());  // the other tables were created too
}
