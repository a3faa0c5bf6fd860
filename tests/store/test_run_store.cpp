// core/store RunStore: every table round-trips, several processes write at once, and a garbage file or
// a lock held past the busy timeout is a one-line moxlab::Error naming the file, never a crash.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/store/run_store.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {

// A fresh directory per test case; the pid keeps concurrent test runs of other engineers apart.
using TempDir = moxlab::testing::ScratchDir;

std::int64_t count_rows(const std::string& db_path, const std::string& sql) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  return db.execAndGet(sql).getInt64();
}

}  // namespace

TEST_CASE("RunStore round-trips runs, metrics, results, artifacts, items and sweeps", "[store][run_store]") {
  TempDir dir("roundtrip");
  const std::string path = dir.file("nested/dirs/runs.db");  // parents do not exist yet
  RunStore store(path);
  CHECK(store.schema_version() == 3);
  CHECK(store.path() == path);

  const std::int64_t sweep = store.create_sweep("lr-sweep", R"({"lr":[1e-3,3e-3]})");
  RunRecord in;
  in.name = "tiny-moe";
  in.kind = "train";
  in.config_json = R"({"d_model":64,"experts":4})";
  in.seed = 1234;
  in.git_rev = "abc123";
  in.data_digest = "deadbeef";
  in.host = "node7";
  in.sweep_id = sweep;
  in.tags = {"moe", "smoke"};
  const std::int64_t id = store.create_run(in);
  CHECK(id > 0);

  RunRecord parent_in;
  parent_in.name = "eval-of-tiny";
  parent_in.kind = "eval";
  parent_in.parent_run = id;
  const std::int64_t child = store.create_run(parent_in);

  RunRecord r = store.get_run(id);
  CHECK(r.id == id);
  CHECK(r.name == "tiny-moe");
  CHECK(r.kind == "train");
  CHECK(r.status == RunStatus::pending);
  CHECK(r.config_json == in.config_json);
  CHECK(r.config_hash == sha256_hex(in.config_json));  // filled in when not given
  CHECK(r.seed == 1234);
  CHECK(r.git_rev == "abc123");
  CHECK(r.data_digest == "deadbeef");
  CHECK(r.host == "node7");
  CHECK(r.created_at > 1.6e9);
  CHECK_FALSE(r.started_at);
  CHECK_FALSE(r.finished_at);
  CHECK_FALSE(r.parent_run);
  CHECK(r.sweep_id == sweep);
  CHECK(r.tags == std::vector<std::string>{"moe", "smoke"});
  CHECK(store.get_run(child).parent_run == id);
  CHECK_FALSE(store.get_run(child).host.empty());  // this machine's name

  store.update_status(id, RunStatus::running);
  r = store.get_run(id);
  CHECK(r.status == RunStatus::running);
  REQUIRE(r.started_at);
  CHECK_FALSE(r.finished_at);
  store.update_status(id, RunStatus::failed, "CUDA out of memory");
  r = store.get_run(id);
  CHECK(r.status == RunStatus::failed);
  CHECK(r.error == "CUDA out of memory");
  REQUIRE(r.finished_at);
  CHECK(*r.finished_at >= *r.started_at);
  store.set_started(id, 100.0);
  store.set_finished(id, 200.0);
  r = store.get_run(id);
  CHECK(*r.started_at == 100.0);
  CHECK(*r.finished_at == 200.0);

  // Metrics: several keys per step in one call; NaN survives (SQLite would store it as NULL).
  store.log_metrics(id, 0, {{"loss", 4.5}, {"lr", 1e-3}}, 10.0);
  store.log_metrics(id, 10, {{"loss", 3.25}, {"lr", 2e-3}});
  store.log_metrics(id, 20, {{"loss", std::nan("")}});
  const auto loss = store.metrics(id, "loss");
  REQUIRE(loss.size() == 3);
  CHECK(loss[0].step == 0);
  CHECK(loss[0].value == 4.5);
  CHECK(loss[1].step == 10);
  CHECK(loss[1].value == 3.25);
  CHECK(std::isnan(loss[2].value));
  CHECK(store.metrics(id, "lr").size() == 2);
  CHECK(store.metric_keys(id) == std::vector<std::string>{"loss", "lr"});
  CHECK(store.metrics(child, "loss").empty());
  store.log_metrics(child, 1, {{"loss", 2.0}});
  store.log_metrics(child, 2, {{"loss", 1.0}});
  store.delete_metrics_after(child, 1);  // a resumed run drops what it will log again
  REQUIRE(store.metrics(child, "loss").size() == 1);
  CHECK(store.metrics(child, "loss")[0].step == 1);

  // Results upsert on (run, key) and carry their metric definition.
  const std::string meta = R"({"metric":"acc_norm","split":"test","n":2376,"definition":"length-normalised"})";
  store.put_result(id, "arc_easy/acc_norm", 0.25, "{}");
  store.put_result(id, "arc_easy/acc_norm", 0.375, meta);
  store.put_result(id, "hellaswag/acc", 0.5);
  const auto results = store.results(id);
  REQUIRE(results.size() == 2);
  CHECK(results[0].key == "arc_easy/acc_norm");
  CHECK(results[0].value == 0.375);
  CHECK(results[0].meta_json == meta);
  CHECK(results[1].key == "hellaswag/acc");
  CHECK(store.result(id, "hellaswag/acc")->value == 0.5);
  CHECK_FALSE(store.result(id, "nope"));

  const std::int64_t a1 = store.add_artifact(id, "checkpoint", "/ckpt/step100.pt", R"({"step":100})");
  store.add_artifact(id, "tensor_log", "/captures/run1.h5");
  store.add_artifact(id, "checkpoint", "/ckpt/step200.pt");
  const auto ckpts = store.artifacts(id, "checkpoint");
  REQUIRE(ckpts.size() == 2);
  CHECK(ckpts[0].id == a1);
  CHECK(ckpts[0].path == "/ckpt/step100.pt");
  CHECK(ckpts[0].meta_json == R"({"step":100})");
  CHECK(ckpts[0].created_at > 1.6e9);
  CHECK(ckpts[1].path == "/ckpt/step200.pt");
  CHECK(store.artifacts(id).size() == 3);
  CHECK(store.artifacts(id, "plot").empty());

  std::vector<std::pair<int, std::string>> items;
  for (int i = 0; i < 500; ++i) items.emplace_back(i, R"({"ll":[-1.5,-2.0],"gold":0})");
  store.add_items(child, "arc_easy", items);
  store.add_items(child, "arc_easy", {{3, R"({"ll":[-9.0],"gold":1})"}});  // replaces item 3
  const auto back = store.items(child, "arc_easy");
  REQUIRE(back.size() == 500);
  CHECK(back[0].idx == 0);
  CHECK(back[3].payload_json == R"({"ll":[-9.0],"gold":1})");
  CHECK(store.items(child, "piqa").empty());

  const SweepRecord s = store.get_sweep(sweep);
  CHECK(s.name == "lr-sweep");
  CHECK(s.spec_json == R"({"lr":[1e-3,3e-3]})");
  CHECK(store.sweep_members(sweep).empty());  // members: test_run_store_sweeps.cpp

  // Filters.
  CHECK(store.list_runs().size() == 2);
  RunFilter by_kind;
  by_kind.kind = "eval";
  REQUIRE(store.find_runs(by_kind).size() == 1);
  CHECK(store.find_runs(by_kind)[0].id == child);
  RunFilter by_status;
  by_status.status = RunStatus::failed;
  CHECK(store.find_runs(by_status).size() == 1);
  RunFilter by_sweep;
  by_sweep.sweep_id = sweep;
  CHECK(store.find_runs(by_sweep).size() == 1);
  RunFilter by_name;
  by_name.name = "nobody";
  CHECK(store.find_runs(by_name).empty());

  // Reopening finds everything; the schema step is idempotent. The file is plain SQLite in WAL mode.
  RunStore again(path);
  CHECK(again.get_run(id).tags == std::vector<std::string>{"moe", "smoke"});
  CHECK(count_rows(path, "SELECT count(*) FROM metrics") == 6);
  CHECK(count_rows(path, "SELECT count(*) FROM items WHERE task = 'arc_easy'") == 500);
  CHECK(count_rows(path, "SELECT count(*) FROM metrics WHERE value IS NULL") == 1);  // the NaN
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("PRAGMA journal_mode").getString() == "wal");
  CHECK(raw.execAndGet("SELECT value FROM meta WHERE key = 'schema_version'").getString() == "3");
  CHECK(raw.execAndGet("SELECT status FROM runs WHERE id = " + std::to_string(id)).getString() == "failed");
}

TEST_CASE("RunStore reports bad ids, bad JSON and unknown runs as Errors", "[store][run_store]") {
  TempDir dir("errors");
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  CHECK_THROWS_WITH(store.get_run(999), "no run with id 999 in " + path);
  CHECK_THROWS_WITH(store.update_status(999, RunStatus::running), Contains("no run with id 999"));
  CHECK_THROWS_AS(store.set_finished(999), Error);
  CHECK_THROWS_WITH(store.get_sweep(5), Contains("no sweep with id 5"));

  RunRecord bad;
  bad.name = "bad";
  bad.config_json = "{not json";
  CHECK_THROWS_WITH(store.create_run(bad), Contains("not valid JSON"));
  // Metrics of a run that does not exist are refused as a whole (foreign key), nothing is written.
  CHECK_THROWS_WITH(store.log_metrics(42, 0, {{"loss", 1.0}, {"acc", 0.5}}), Contains(path));
  CHECK(count_rows(path, "SELECT count(*) FROM metrics") == 0);
  const std::int64_t id = store.create_run(RunRecord{});
  CHECK_THROWS_WITH(store.add_items(id, "t", {{0, "{}"}, {1, "oops"}}), Contains("not valid JSON"));
  CHECK(store.items(id, "t").empty());
  CHECK_THROWS_AS(parse_run_status("exploded"), Error);

  // A read-only store must exist and must already be a run store.
  CHECK_THROWS_WITH(RunStore(dir.file("missing.db"), RunStoreOptions{1000, true}), Contains("no run store at"));
  RunStore ro(path, RunStoreOptions{1000, true});
  CHECK(ro.get_run(id).id == id);
}

TEST_CASE("RunStore refuses a file that is not a SQLite database with one clear line", "[store][run_store]") {
  TempDir dir("garbage");
  std::filesystem::create_directories(dir.path);
  const std::string path = dir.file("runs.db");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 4096; ++i) out.put(static_cast<char>((i * 7919) & 0xff));
  }
  try {
    RunStore store(path);
    FAIL("opening a garbage file succeeded");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Contains(path));
    CHECK_THAT(what, Contains("not a SQLite database"));
    CHECK(what.find('\n') == std::string::npos);
  }
  // A truncated database (valid header, half the pages gone) is also an Error, not a crash.
  const std::string good = dir.file("good.db");
  {
    RunStore store(good);
    const std::int64_t id = store.create_run(RunRecord{});
    std::vector<std::pair<int, std::string>> items;
    for (int i = 0; i < 3000; ++i) items.emplace_back(i, R"({"payload":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})");
    store.add_items(id, "t", items);
  }
  {
    SQLite::Database db(good, SQLite::OPEN_READWRITE);  // fold the WAL into the main file first
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.exec("PRAGMA journal_mode=DELETE");
  }
  std::filesystem::resize_file(good, std::filesystem::file_size(good) / 2);
  try {
    RunStore store(good);
    (void)store.items(1, "t");
    (void)store.list_runs();
    SUCCEED("truncation went unnoticed by the pages read");  // SQLite only reads what it needs
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Contains(good));
  }
}

TEST_CASE("RunStore gives up on a lock held past the busy timeout with 'database is locked'", "[store][run_store]") {
  TempDir dir("locked");
  const std::string path = dir.file("runs.db");
  RunStore store(path, RunStoreOptions{200, false});
  const std::int64_t id = store.create_run(RunRecord{});

  SQLite::Database other(path, SQLite::OPEN_READWRITE);
  other.exec("BEGIN EXCLUSIVE");
  other.exec("INSERT INTO metrics(run_id, step, key, value, wall_time) VALUES(" + std::to_string(id) +
             ", 99, 'held', 1, 0)");

  // Opening and reading still work next to a writer (WAL); only writing has to wait.
  RunStore reader(path, RunStoreOptions{200, false});
  CHECK(reader.get_run(id).id == id);

  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(store.log_metrics(id, 1, {{"loss", 1.0}, {"acc", 0.5}}), "database is locked: " + path);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(waited >= 0.15);  // it did wait for the timeout rather than failing at once
  CHECK_THROWS_WITH(store.put_result(id, "k", 1.0), Contains("locked"));

  other.exec("ROLLBACK");
  store.log_metrics(id, 1, {{"loss", 1.0}, {"acc", 0.5}});
  CHECK(store.metric_keys(id) == std::vector<std::string>{"acc", "loss"});  // no 'held', no duplicates
  CHECK(store.metrics(id, "loss").size() == 1);
}

TEST_CASE("RunStore takes concurrent writes from several processes", "[store][run_store]") {
  TempDir dir("concurrent");
  const std::string path = dir.file("runs.db");  // does not exist: the workers race to create it
  constexpr int kWorkers = 3;
  constexpr int kSteps = 150;
  const auto start = std::chrono::system_clock::now() + std::chrono::milliseconds(200);

  std::vector<pid_t> pids;
  for (int w = 0; w < kWorkers; ++w) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Child: never return into Catch2; report through the exit status.
      int code = 0;
      try {
        std::this_thread::sleep_until(start);
        RunStore store(path);
        RunRecord run;
        run.name = "worker" + std::to_string(w);
        const std::int64_t id = store.create_run(run);
        for (int step = 0; step < kSteps; ++step) {
          store.log_metrics(id, step, {{"loss", 1.0 / (step + 1)}, {"lr", 1e-3}, {"tokens", step * 512.0}});
        }
        store.put_result(id, "final", w);
        store.update_status(id, RunStatus::finished);
      } catch (const std::exception& e) {
        std::cerr << "worker " << w << ": " << e.what() << "\n";
        code = 1;
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }

  RunStore store(path);
  const auto runs = store.list_runs();
  REQUIRE(runs.size() == kWorkers);
  for (const RunRecord& r : runs) {
    CHECK(r.status == RunStatus::finished);
    CHECK(store.metrics(r.id, "loss").size() == kSteps);
    CHECK(store.metrics(r.id, "tokens").size() == kSteps);
    CHECK(store.results(r.id).size() == 1);
  }
  CHECK(count_rows(path, "SELECT count(*) FROM metrics") == kWorkers * kSteps * 3);
}

TEST_CASE("RunStore::set_tags replaces a run's tags, dropping duplicates and empty ones", "[store][run_store]") {
  TempDir dir("tags");
  RunStore store(dir.file("runs.db"));
  RunRecord r;
  r.tags = {"old"};
  const std::int64_t id = store.create_run(r);
  store.set_tags(id, {"best", "", "x2", "best"});
  CHECK(store.get_run(id).tags == std::vector<std::string>{"best", "x2"});
  store.set_tags(id, {});
  CHECK(store.get_run(id).tags.empty());
  CHECK_THROWS_WITH(store.set_tags(id + 1, {"a"}), Contains("no run with id"));
}
