// moxlab-viewer's command line against a store written directly (no training): a window size that is
// not WxH and a run that is not in the store are one-line errors with a non-zero exit, and the Tables
// screenshot of a sweep member (--run) shows a table of that member's sweep.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/store/run_store.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

#ifdef MOXLAB_VIEWER

namespace {

struct ViewerResult {
  int exit_code = -1;
  std::string err;
  nlohmann::json stats;  // the headless screenshot's JSON line (null when none)
};

ViewerResult run_viewer(const std::string& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir + "' && xvfb-run -a -s '-screen 0 1280x800x24' '" MOXLAB_VIEWER "' " + args +
                          " > .viewer_out 2> .viewer_err";
  const int status = std::system(cmd.c_str());
  ViewerResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  std::ifstream err(dir + "/.viewer_err");
  r.err.assign(std::istreambuf_iterator<char>(err), {});
  std::ifstream out(dir + "/.viewer_out");
  std::string line;
  std::getline(out, line);
  r.stats = nlohmann::json::parse(line, nullptr, false);
  return r;
}

bool has_message(const ViewerResult& r, const std::string& needle) {
  if (!r.stats.is_object()) return false;
  for (const auto& m : r.stats["messages"])
    if (m.get<std::string>().find(needle) != std::string::npos) return true;
  return false;
}

// A store with one finished sweep member (run 1) and one run outside any sweep (run 2).
void write_store(const std::string& path) {
  RunStore store(path);
  SweepMember member;
  member.label = "train.lr=0.003";
  const std::int64_t sweep = store.create_sweep("tiny_lr", "{}", {member});
  RunRecord run;
  run.name = "tiny_lr.0";
  run.kind = "train";
  run.status = RunStatus::finished;
  run.config_json = R"({"train.lr":0.003,"model.dim":64,"train.seed":1})";
  run.sweep_id = sweep;
  const std::int64_t id = store.create_run(run);
  store.put_result(id, "train_end/val/loss", 3.5, R"({"metric":"loss","definition":"mean NLL"})");
  RunRecord alone = run;
  alone.name = "alone";
  alone.sweep_id.reset();
  store.create_run(alone);
}

}  // namespace

TEST_CASE("moxlab-viewer: bad --size and an absent --run are one-line errors and Tables follows --run", "[e2e][viewer]") {
  if (std::system("command -v xvfb-run > /dev/null 2>&1") != 0) {
    WARN("SKIPPED: xvfb-run is not installed (apt install xvfb xauth)");
    return;
  }
  const std::string dir = scratch_dir("viewer_inputs");
  write_store(dir + "/runs.db");

  for (const std::string size : {"1400x", "x900", "1400x9e2", "wide"}) {
    const ViewerResult r = run_viewer(dir, "runs.db --screenshot runs --out a.png --size " + size);
    INFO(size << ": " << r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err == "moxlab-viewer: error: --size: expected WxH in pixels (e.g. 1400x900), got '" + size + "'\n");
  }

  const ViewerResult absent = run_viewer(dir, "runs.db --screenshot curves --run 9999 --out a.png");
  INFO(absent.err);
  CHECK(absent.exit_code != 0);
  CHECK(absent.err == "moxlab-viewer: error: run 9999 is not in the store runs.db (its runs are 1..2)\n");
  const ViewerResult selected = run_viewer(dir, "runs.db --screenshot curves --run 1 --select 2,77 --out a.png");
  CHECK(selected.exit_code != 0);
  CHECK(selected.err.find("run 77 is not in the store") != std::string::npos);
  const ViewerResult negative = run_viewer(dir, "runs.db --screenshot curves --run -3 --out a.png");
  CHECK(negative.exit_code != 0);
  CHECK(negative.err.find("--run: must be a run id (a positive integer), got '-3'") != std::string::npos);

  const ViewerResult help = run_viewer(dir, "--help");
  CHECK(help.exit_code == 0);
  std::ifstream out(dir + "/.viewer_out");
  const std::string help_text((std::istreambuf_iterator<char>(out)), {});
  for (const char* panel : {"runs", "curves", "observations", "routing", "tomoe", "tables", "bench"})
    CHECK(help_text.find(panel) != std::string::npos);

  const ViewerResult member = run_viewer(dir, "runs.db --screenshot tables --run 1 --size 1280x800 --out t.png");
  INFO(member.err << member.stats.dump());
  REQUIRE(member.exit_code == 0);
  CHECK(has_message(member, "Table of run 1's sweep tiny_lr"));
  CHECK(member.stats["rows"].get<int>() == 1);
  const ViewerResult alone = run_viewer(dir, "runs.db --screenshot tables --run 2 --size 1280x800 --out t.png");
  CHECK(alone.exit_code == 0);
  CHECK(has_message(alone, "run 2 is in no sweep"));
}

#endif
