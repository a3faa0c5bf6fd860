// Merging run-store shards (core/store/store_merge.h): runs of two shards folded into a main store with
// every row following its run's new id, provenance kept, the sweep members taking the shards' state;
// merging again changes nothing, a shard that went on replaces what it brought; conflicts, the store
// itself or a copy of it as the shard are errors that leave the target as it was; a merge killed at
// any moment leaves the target either as it was or fully merged.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/common/error.h"
#include "core/store/run_store.h"
#include "core/store/store_merge.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {

// The same plan in every store: sweep "grid", three seeds (what `sweep run --shard` copies into a shard).
std::int64_t plan(RunStore& s, int members = 3) {
  std::vector<SweepMember> m;
  for (int i = 0; i < members; ++i) {
    SweepMember x;
    x.idx = i;
    x.label = "train.seed=" + std::to_string(i + 1);
    x.config_json = R"({"train":{"seed":)" + std::to_string(i + 1) + "}}";
    m.push_back(x);
  }
  return s.create_sweep("grid", R"({"name":"grid"})", m);
}

// Runs member idx in the store as a worker on `host` would: the run, its rows, the member finished.
std::int64_t run_member(RunStore& s, std::int64_t sweep, int idx, const std::string& host, int steps = 3) {
  REQUIRE(s.claim_sweep_member(sweep, idx, "pending", "", host + ":1"));
  RunRecord r;
  r.name = "grid";
  r.kind = "train";
  r.status = RunStatus::running;
  r.config_json = R"({"train":{"seed":)" + std::to_string(idx + 1) + "}}";
  r.seed = idx + 1;
  r.git_rev = "0123456789abcdef0123456789abcdef01234567";
  r.host = host;
  r.sweep_id = sweep;
  const std::int64_t id = s.create_run(r);
  REQUIRE(s.set_sweep_member_run(sweep, idx, host + ":1", id));
  for (int step = 1; step <= steps; ++step) s.log_metrics(id, step, {{"train/loss", 5.0 - step - 0.1 * idx}}, 1000.0 + step);
  s.put_result(id, "loss/val/all", 3.5 + 0.1 * idx, R"({"metric":"loss"})");
  s.add_artifact(id, "checkpoint", "/shared/runs/" + host + "/" + std::to_string(id) + "/checkpoint.pt");
  s.add_items(id, "piqa", {{0, R"({"ok":true})"}});
  s.update_status(id, RunStatus::finished);
  REQUIRE(s.finish_sweep_member(sweep, idx, host + ":1", "finished"));
  return id;
}

// Every row of the tables a merge writes, in a canonical order: equal dumps mean equal stores.
std::string dump(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  std::string out;
  for (const char* sql :
       {"SELECT id, name, kind, status, config_json, seed, host, parent_run, sweep_id, finished_at FROM runs ORDER BY id",
        "SELECT run_id, step, key, value, wall_time FROM metrics ORDER BY run_id, step, key",
        "SELECT run_id, key, value, meta_json FROM results ORDER BY run_id, key",
        "SELECT run_id, kind, path FROM artifacts ORDER BY id", "SELECT run_id, task, idx, payload_json FROM items ORDER BY run_id",
        "SELECT id, name, spec_json FROM sweeps ORDER BY id",
        "SELECT sweep_id, idx, run_id, status, worker, attempts FROM sweep_members ORDER BY sweep_id, idx"}) {
    SQLite::Statement q(db, sql);
    while (q.executeStep()) {
      for (int c = 0; c < q.getColumnCount(); ++c) out += q.getColumn(c).getString() + "|";
      out += "\n";
    }
    out += "--\n";
  }
  if (db.tableExists("run_origins")) {
    SQLite::Statement q(db, "SELECT run_id, origin, origin_run, signature FROM run_origins ORDER BY run_id");
    while (q.executeStep()) out += q.getColumn(0).getString() + "|" + q.getColumn(1).getString() + "|" +
                                   q.getColumn(2).getString() + "|" + q.getColumn(3).getString() + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("store merge folds shards into the main store, and merging again changes nothing", "[store][merge]") {
  testing::ScratchDir dir("merge");
  const std::string main_path = dir.file("runs.db"), a_path = dir.file("shard-1.db"), b_path = dir.file("shard-2.db");
  {
    RunStore main(main_path), a(a_path), b(b_path);
    run_member(main, plan(main), 0, "node0");
    const std::int64_t a_run = run_member(a, plan(a), 1, "node1", 4);
    RunRecord child;  // an evaluation of the shard's run, recorded in the shard
    child.name = "eval";
    child.kind = "eval";
    child.status = RunStatus::finished;
    child.parent_run = a_run;
    child.host = "node1";
    a.create_run(child);
    run_member(b, plan(b), 2, "node2");
  }

  const MergeReport ra = merge_store(main_path, a_path);
  CHECK(merge_report_text(ra) == "2 runs added, 0 updated, 0 unchanged; 0 sweeps added; 1 members updated");
  CHECK(merge_report_text(merge_store(main_path, b_path)) == "1 runs added, 0 updated, 0 unchanged; 0 sweeps added; 1 members updated");
  {
    RunStore main(main_path);
    const auto members = main.sweep_members(1);
    REQUIRE(members.size() == 3);
    for (const auto& m : members) CHECK(m.status == "finished");
    CHECK(members[1].run_id == std::optional<std::int64_t>(2));  // shard 1's run 1 is run 2 here
    CHECK(members[2].run_id == std::optional<std::int64_t>(4));  // after shard 1's child (run 3)
    const RunRecord r = main.get_run(2);
    CHECK(r.host == "node1");
    CHECK(r.sweep_id == std::optional<std::int64_t>(1));
    CHECK(main.metrics(2, "train/loss").size() == 4);
    CHECK(main.metrics(2, "train/loss")[3].value == Approx(0.9));
    CHECK(main.result(2, "loss/val/all")->value == Approx(3.6));
    CHECK(main.artifacts(2, "checkpoint").at(0).path == "/shared/runs/node1/1/checkpoint.pt");
    CHECK(main.items(2, "piqa").size() == 1);
    CHECK(main.get_run(3).parent_run == std::optional<std::int64_t>(2));  // the child follows its parent
    CHECK(main.metrics(1, "train/loss").size() == 3);                     // the main store's own run untouched
  }

  // Idempotent: merging both shards again changes no row.
  const std::string merged = dump(main_path);
  CHECK(merge_report_text(merge_store(main_path, a_path)) == "0 runs added, 0 updated, 2 unchanged; 0 sweeps added; 0 members updated");
  CHECK(merge_report_text(merge_store(main_path, b_path)) == "0 runs added, 0 updated, 1 unchanged; 0 sweeps added; 0 members updated");
  CHECK(dump(main_path) == merged);

  // A sweep the main store does not have arrives with its members.
  {
    RunStore e(dir.file("shard-e.db"));
    const std::int64_t other = e.create_sweep("other", "{}", {SweepMember{}});
    run_member(e, other, 0, "node5");
  }
  CHECK(merge_report_text(merge_store(main_path, dir.file("shard-e.db"))) ==
        "1 runs added, 0 updated, 0 unchanged; 1 sweeps added; 1 members updated");
  CHECK(RunStore(main_path).sweep_members(2).at(0).run_id == std::optional<std::int64_t>(5));

  // A shard that went on (one more step logged, a result revised) replaces what it brought, under the same id.
  {
    RunStore a(a_path);
    a.log_metrics(1, 5, {{"train/loss", 0.5}}, 1005.0);
    a.put_result(1, "loss/val/all", 3.4, R"({"metric":"loss"})");
  }
  CHECK(merge_report_text(merge_store(main_path, a_path)) == "0 runs added, 1 updated, 1 unchanged; 0 sweeps added; 0 members updated");
  RunStore main(main_path);
  CHECK(main.metrics(2, "train/loss").size() == 5);
  CHECK(main.result(2, "loss/val/all")->value == Approx(3.4));
  CHECK(main.list_runs().size() == 5);
}

TEST_CASE("store merge: a conflict, the store itself or a copy of it are errors that leave the target as it was", "[store][merge]") {
  testing::ScratchDir dir("merge_errors");
  const std::string main_path = dir.file("runs.db"), c_path = dir.file("shard-c.db"), d_path = dir.file("shard-d.db");
  {
    RunStore main(main_path), c(c_path), d(d_path);
    run_member(main, plan(main), 0, "node0");
    const std::int64_t sweep = plan(c);
    run_member(c, sweep, 2, "node3");  // merges fine ...
    run_member(c, sweep, 0, "node3");  // ... but member 0 already finished in the main store
    run_member(d, plan(d, 4), 3, "node4");  // a plan with a member the target does not have
  }
  const std::string before = dump(main_path);
  CHECK_THROWS_WITH(merge_store(main_path, c_path),
                    Contains("member 0 of sweep grid finished in both stores, as target run 1 and as the shard's"));
  CHECK(dump(main_path) == before);  // member 2's run, copied before the conflict, rolled back too
  // The same sweep planned with a member the target's plan lacks.
  CHECK_THROWS_WITH(merge_store(main_path, d_path), Contains("member 3 of sweep grid is in the shard but not in the target's plan"));
  CHECK(dump(main_path) == before);
  CHECK_THROWS_WITH(merge_store(main_path, main_path), Contains("into itself"));
  std::filesystem::copy_file(main_path, dir.file("copy.db"));
  CHECK_THROWS_WITH(merge_store(main_path, dir.file("copy.db")), Contains("is a copy of the target"));
  CHECK_THROWS_WITH(merge_store(main_path, dir.file("absent.db")), Contains("no shard store at"));
  dir.write("text.db", "not a database at all, just text that is long enough to have a header........");
  CHECK_THROWS_AS(merge_store(main_path, dir.file("text.db")), Error);
}

TEST_CASE("store merge killed at any moment leaves the target as it was or fully merged", "[store][merge]") {
  testing::ScratchDir dir("merge_kill");
  const std::string shard = dir.file("shard.db"), fresh = dir.file("fresh.db");
  {
    RunStore s(shard), f(fresh);
    const std::int64_t sweep = plan(s, 12);
    for (int i = 0; i < 12; ++i) run_member(s, sweep, i, "node1", 400);  // enough rows for the merge to take a while
    plan(f, 12);
  }
  const std::string expected_path = dir.file("expected.db");
  std::filesystem::copy_file(fresh, expected_path);
  merge_store(expected_path, shard);
  const std::string merged = dump(expected_path), empty = dump(fresh);
  for (int delay_us : {0, 2000, 8000, 20000, 60000}) {
    const std::string target = dir.file("target-" + std::to_string(delay_us) + ".db");
    std::filesystem::copy_file(fresh, target);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      try {
        merge_store(target, shard);
      } catch (...) {
        _exit(1);
      }
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    INFO("killed after " << delay_us << " us");
    const std::string now = dump(target);
    CHECK((now == empty || now == merged));
    merge_store(target, shard);  // finishing (or repeating) the merge gives the merged store
    CHECK(dump(target) == merged);
  }
  CHECK(merged != empty);
}
