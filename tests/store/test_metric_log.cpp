// A store whose write lock another process holds past the busy timeout delays a run's metric rows
// instead of failing the run: they wait in memory and are written, each exactly once, once it frees.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/metric_log.h"
#include "core/store/run_store.h"
#include "core/store/store_retry.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

TEST_CASE("metrics wait in memory while another process holds the store, then are written once", "[store][busy]") {
  testing::ScratchDir dir("metric-log");
  const std::string path = dir.file("runs.db");
  RunStore store(path);
  const std::int64_t run = store.create_run(RunRecord{});
  MetricLog log(path, run);
  std::vector<std::string> notes;
  log.note = [&](const std::string& s) { notes.push_back(s); };
  log.add(1, {{"loss", 3.0}, {"lr", 0.1}});
  CHECK(log.pending_rows() == 0);  // a free store takes the rows at once

  SQLite::Database other(path, SQLite::OPEN_READWRITE);
  other.exec("BEGIN EXCLUSIVE");
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 2; step <= 6; ++step) log.add(step, {{"loss", 3.0 - 0.1 * step}, {"lr", 0.1}});
  CHECK(seconds_since(t0) < 2.0);  // the run went on: one short try, then a backoff
  CHECK(log.pending_rows() == 10);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Contains("locked by another process"));
  CHECK_THROWS_AS(log.flush(0.3), RunStoreBusy);  // a bounded wait gives up with the lock still held
  CHECK(log.pending_rows() == 10);                // and keeps the rows

  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    other.exec("COMMIT");
  });
  log.flush(30);  // waits until the lock frees
  release.join();
  CHECK(log.pending_rows() == 0);
  CHECK(notes.size() == 2);
  const auto loss = store.metrics(run, "loss");
  REQUIRE(loss.size() == 6);
  for (std::size_t i = 0; i < loss.size(); ++i) {
    CHECK(loss[i].step == static_cast<std::int64_t>(i + 1));
    const double expected = i == 0 ? 3.0 : 3.0 - 0.1 * static_cast<double>(i + 1);
    CHECK(loss[i].value == Approx(expected));
  }
  CHECK(store.metrics(run, "lr").size() == 6);
}

TEST_CASE("retry_while_busy waits out a lock held past the busy timeout and gives up after its wait", "[store][busy]") {
  testing::ScratchDir dir("store-retry");
  const std::string path = dir.file("runs.db");
  RunStoreOptions quick;
  quick.busy_timeout_ms = 50;
  RunStore store(path, quick);
  const std::int64_t run = store.create_run(RunRecord{});
  SQLite::Database other(path, SQLite::OPEN_READWRITE);
  other.exec("BEGIN EXCLUSIVE");
  CHECK_THROWS_AS(store.update_status(run, RunStatus::finished), RunStoreBusy);

  int waits = 0;
  CHECK_THROWS_WITH(retry_while_busy([&] { store.update_status(run, RunStatus::finished); }, 0.3, [&] { ++waits; }),
                    "database is locked: " + path);
  CHECK(waits == 1);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    other.exec("COMMIT");
  });
  retry_while_busy([&] { store.update_status(run, RunStatus::finished); }, 30);
  release.join();
  CHECK(store.get_run(run).status == RunStatus::finished);
  // Other errors are not waited on.
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(retry_while_busy([&] { store.get_run(999); }, 30), Contains("no run with id 999"));
  CHECK(seconds_since(t0) < 1.0);
}
