// The run store tells the truth about runs through the moxlab binary: a training killed by SIGKILL
// shows as killed, its resume removes the checkpoint temporary a killed save left (not a live
// writer's), a training waits out another process's lock on the store, and a store in a read-only
// directory is readable by `runs` and `table`.
#include "tests/torch_catch.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/run_store.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

// The status column of run `id` in `moxlab runs` output ("" when the run is not listed).
std::string listed_status(const std::string& runs_out, std::int64_t id) {
  std::istringstream lines(runs_out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cols(line);
    std::string run, name, kind, status;
    cols >> run >> name >> kind >> status;
    if (run == std::to_string(id)) return status;
  }
  return "";
}

// Polls until pred() holds or `seconds` pass.
template <class Pred>
bool wait_for(Pred pred, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace

TEST_CASE("A training killed by SIGKILL shows killed, and its resume removes a dead save's temp file only",
          "[e2e][train][state]") {
  const std::string dir = scratch_dir("killed");
  write_micro_config(dir, 60);
  // SIGKILL right after the first checkpoint (step 20 of 60): nothing in the process can record it.
  interrupt_at_first_checkpoint("train --config micro.toml", dir, "echo $pid > train.pid; kill -KILL $pid");
  INFO(file_text(dir + "/a.err"));
  {
    RunStoreOptions ro;
    ro.read_only = true;
    REQUIRE(RunStore(dir + "/runs/runs.db", ro).get_run(1).status == RunStatus::running);  // as the kill left it
  }
  auto runs = run_cli("runs", dir);
  INFO(runs.out << runs.err);
  REQUIRE(runs.exit_code == 0);
  CHECK(listed_status(runs.out, 1) == "killed");

  // A save killed mid-write leaves checkpoint.pt.tmp.<its pid>; one of a live process may be a save
  // in progress (this test process stands in for it).
  const std::string killed_pid = file_text(dir + "/train.pid").substr(0, file_text(dir + "/train.pid").find('\n'));
  const std::string dead_tmp = dir + "/runs/1-micro/checkpoint.pt.tmp." + killed_pid;
  const std::string live_tmp = dir + "/runs/1-micro/checkpoint.pt.tmp." + std::to_string(::getpid());
  std::ofstream(dead_tmp) << "half a checkpoint";
  std::ofstream(live_tmp) << "a checkpoint being written";
  auto res = run_cli("train --config micro.toml --resume", dir);
  INFO(res.err);
  REQUIRE(res.exit_code == 0);
  CHECK(res.out.find("finished at step 60") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dead_tmp));
  CHECK(std::filesystem::exists(live_tmp));
  CHECK(listed_status(run_cli("runs", dir).out, 1) == "finished");
  RunStore store(dir + "/runs/runs.db");
  CHECK(store.metrics(1, "train/loss").size() == 6);  // every 10 steps, none twice
}

TEST_CASE("A training waits out a store lock held past the busy timeout and loses no metric row",
          "[e2e][train][state]") {
  const std::string dir = scratch_dir("locked");
  write_micro_config(dir, 60);
  const std::string db = dir + "/runs/runs.db";
  const std::string cmd = "cd '" + dir + "' && ( '" MOXLAB_CLI "' train --config micro.toml > b.out 2> b.err; echo $? > b.rc ) &";
  std::system(cmd.c_str());
  // Once the training logs, hold the write lock longer than a write's 10 s busy timeout, as a
  // sqlite3 shell or a long import would.
  const bool logging = wait_for(
      [&] {
        try {
          SQLite::Database peek(db, SQLite::OPEN_READONLY);
          return peek.execAndGet("SELECT COUNT(*) FROM metrics").getInt() > 0;
        } catch (const SQLite::Exception&) {
          return false;
        }
      },
      300);
  INFO(file_text(dir + "/b.err"));
  REQUIRE(logging);
  {
    SQLite::Database other(db, SQLite::OPEN_READWRITE);
    other.exec("BEGIN EXCLUSIVE");
    std::this_thread::sleep_for(std::chrono::seconds(12));
    other.exec("COMMIT");
  }
  REQUIRE(wait_for([&] { return std::filesystem::exists(dir + "/b.rc") && !file_text(dir + "/b.rc").empty(); }, 300));
  const std::string err = file_text(dir + "/b.err");
  INFO(err);
  CHECK(file_text(dir + "/b.rc") == "0\n");
  CHECK(err.find("locked by another process") != std::string::npos);  // the lock did meet the training
  RunStore store(db);
  CHECK(store.get_run(1).status == RunStatus::finished);
  const auto loss = store.metrics(1, "train/loss");
  REQUIRE(loss.size() == 6);
  for (std::size_t i = 0; i < loss.size(); ++i) CHECK(loss[i].step == static_cast<std::int64_t>(10 * (i + 1)));
  CHECK(store.metrics(1, "val/loss").size() == 3);  // steps 20, 40, 60
  CHECK(store.artifacts(1, "checkpoint").size() == 1);
}

TEST_CASE("runs and table read a store in a directory the reader cannot write", "[e2e][state][read_only]") {
  // Root ignores file permissions, so as root the commands run as nobody (setpriv).
  std::string as_reader;
  if (::geteuid() == 0) {
    if (std::system("command -v setpriv > /dev/null 2>&1") != 0) {
      WARN("skipping: running as root and setpriv (util-linux) is not installed to read as an unprivileged user");
      return;
    }
    as_reader = "setpriv --reuid=nobody --regid=nogroup --clear-groups ";
  }
  const std::string dir = scratch_dir("read_only");
  std::filesystem::create_directories(dir + "/archive");
  {
    RunStore store(dir + "/archive/runs.db");
    RunRecord r;
    r.name = "archived";
    r.kind = "train";
    r.status = RunStatus::finished;
    r.config_json = R"({"run.name":"archived","train.lr":0.003,"train.seed":1})";
    r.git_rev = "0123456789abcdef0123456789abcdef01234567";  // one pinned build
    store.put_result(store.create_run(r), "train_end/val/loss", 2.5, R"({"metric":"loss","split":"val","definition":"mean NLL"})");
  }
  std::ofstream(dir + "/spec.toml") << "title = \"archive\"\n[select]\nkind = \"train\"\n[layout]\nrows = [\"train.lr\"]\n"
                                       "[[column]]\nmetric = \"train_end/val/loss\"\nlabel = \"val loss\"\ndigits = 2\n";
  ::chmod((dir + "/archive/runs.db").c_str(), 0444);
  ::chmod((dir + "/archive").c_str(), 0555);
  auto run_as_reader = [&](const std::string& args) {
    const std::string c = "cd '" + dir + "' && " + as_reader + "'" MOXLAB_CLI "' " + args + " > r.out 2> r.err";
    const int status = std::system(c.c_str());
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, file_text(dir + "/r.out") + file_text(dir + "/r.err"));
  };
  const auto [runs_rc, runs_text] = run_as_reader("runs --store archive/runs.db");
  INFO(runs_text);
  CHECK(runs_rc == 0);
  CHECK(listed_status(runs_text, 1) == "finished");
  const auto [table_rc, table_text] = run_as_reader("table spec.toml --store archive/runs.db --format csv");
  INFO(table_text);
  CHECK(table_rc == 0);
  CHECK(table_text.find("0.003,2.5,") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/archive/runs.db-shm"));
  ::chmod((dir + "/archive").c_str(), 0755);
}
