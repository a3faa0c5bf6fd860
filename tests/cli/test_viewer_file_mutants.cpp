// End to end: moxlab-viewer's headless screenshots (under xvfb-run) of the Observations, Routing and
// ToMoE panels over mutated HDF5 files registered as a run's artifacts: today's layout, the older one
// with variable-length strings, and the reliability audit's one-byte global-heap corruption that made
// the viewer die with SIGSEGV. Every screenshot exits 0 with its JSON line: plots, or the error shown
// in the panel.
#include "tests/torch_catch.h"

#include <cstdlib>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/store/run_store.h"
#include "tests/mutation/hdf5_fixtures.h"
#include "tests/mutation/hdf5_mutants.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using namespace moxlab::testing;

#ifdef MOXLAB_VIEWER

namespace {

struct Shot {
  int exit_code = -1;
  nlohmann::json stats;
  std::string err;
};

Shot screenshot(const std::string& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir + "' && MOXLAB_HDF5_PROBE_SECONDS=4 timeout 60 xvfb-run -a -s '-screen 0 1024x700x24' '" MOXLAB_VIEWER
                          "' runs.db " + args + " --size 1024x700 --out shot.png > .viewer_out 2> .viewer_err";
  const int status = std::system(cmd.c_str());
  Shot s;
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  std::ifstream err(dir + "/.viewer_err");
  s.err.assign(std::istreambuf_iterator<char>(err), {});
  std::ifstream out(dir + "/.viewer_out");
  std::string line;
  std::getline(out, line);
  s.stats = nlohmann::json::parse(line, nullptr, false);
  return s;
}

// A handful of mutants of path: two of today's layout, two of the older one, and two changes of the older
// copy's global-heap size: the audit's (the byte 10 past "GCOL" set to 0x01), which crashed the viewer
// on an observations file, and its low byte set to 0xff, which crashed it on a routing file.
std::vector<Mutant> few_mutants(const ScratchDir& dir, const std::string& path, std::uint64_t seed) {
  std::vector<Mutant> out = make_mutants(read_bytes(path), 2, seed);
  write_legacy_copy(path, dir.file("legacy.h5"));
  const std::string legacy = read_bytes(dir.file("legacy.h5"));
  for (Mutant& m : make_mutants(legacy, 2, seed + 1)) out.push_back({m.bytes, "legacy layout: " + m.how});
  const auto gcol = legacy.find("GCOL");
  REQUIRE(gcol != std::string::npos);
  for (const auto& [byte, value] : {std::pair<int, char>{10, 0x01}, std::pair<int, char>{8, '\xff'}}) {
    Mutant m{legacy, "legacy layout: GCOL+" + std::to_string(byte) + " = " + std::to_string(value & 0xff)};
    m.bytes[gcol + byte] = value;
    out.push_back(std::move(m));
  }
  return out;
}

// Registers each mutant of `file` as artifact `kind` of a new run (plus `extra` artifacts), screenshots
// `panel` for each run and checks the viewer drew or reported, and exited 0.
void screenshot_mutants(const std::string& panel, const std::string& kind, const std::string& file, std::uint64_t seed,
                        const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  if (std::system("command -v xvfb-run > /dev/null 2>&1") != 0) {
    WARN("SKIPPED: xvfb-run is not installed (apt install xvfb xauth)");
    return;
  }
  ScratchDir dir("viewer_mutants_" + panel);
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  const std::map<std::string, std::string> files = {{"observations", f.observations}, {"routing", f.routing},
                                                    {"tomoe", f.tomoe}, {"routing_capture", f.routing_capture}};
  RunStore store(dir.file("runs.db"));
  int shots = 0, messages = 0;
  for (const Mutant& m : few_mutants(dir, files.at(file), seed)) {
    RunRecord run;
    run.name = "mutant";
    run.kind = "train";
    run.status = RunStatus::finished;
    run.config_json = R"({"model.attention":"mohd","model.ffn":"tomoe"})";
    const std::int64_t id = store.create_run(run);
    const std::string path = dir.file("mutant_" + std::to_string(id) + ".h5");
    write_bytes(path, m.bytes);
    store.add_artifact(id, kind, path);
    for (const auto& [k, which] : extra) store.add_artifact(id, k, files.at(which));
    const Shot s = screenshot(dir.path.string(), "--screenshot " + panel + " --run " + std::to_string(id));
    INFO(panel << ", " << m.how << ": exit " << s.exit_code << ", " << s.stats.dump() << "\n" << s.err);
    CHECK(s.exit_code == 0);
    REQUIRE(s.stats.is_object());
    CHECK((s.stats["plots"].get<int>() > 0 || !s.stats["messages"].empty()));
    ++shots;
    messages += !s.stats["messages"].empty();
  }
  WARN(panel + " panel screenshots of mutated files: " + std::to_string(shots) + " exited 0, " +
       std::to_string(messages) + " with the error in the panel");
}

}  // namespace

TEST_CASE("moxlab-viewer Observations over mutated observations files: a message, never a crash", "[e2e][viewer][mutation]") {
  screenshot_mutants("observations", "observations", "observations", 2931);
}

TEST_CASE("moxlab-viewer Routing over mutated routing files: a message, never a crash", "[e2e][viewer][mutation]") {
  screenshot_mutants("routing", "routing", "routing", 2932);
}

TEST_CASE("moxlab-viewer ToMoE over mutated conversion files: a message, never a crash", "[e2e][viewer][mutation]") {
  screenshot_mutants("tomoe", "tomoe_conversion", "tomoe", 2933, {{"routing", "routing"}});
}

TEST_CASE("moxlab-viewer ToMoE over mutated routing captures: a message, never a crash", "[e2e][viewer][mutation]") {
  // The routing file names its capture (attribute source): the mutated capture is put in its place.
  if (std::system("command -v xvfb-run > /dev/null 2>&1") != 0) {
    WARN("SKIPPED: xvfb-run is not installed (apt install xvfb xauth)");
    return;
  }
  ScratchDir dir("viewer_mutants_tomoe_capture");
  const Hdf5Fixtures f = write_hdf5_fixtures(dir.path.string());
  const std::string original = read_bytes(f.routing_capture);
  RunStore store(dir.file("runs.db"));
  RunRecord run;
  run.name = "tomoe";
  run.kind = "train";
  run.status = RunStatus::finished;
  run.config_json = R"({"model.ffn":"tomoe"})";
  const std::int64_t id = store.create_run(run);
  store.add_artifact(id, "tomoe_conversion", f.tomoe);
  store.add_artifact(id, "routing", f.routing);
  for (const Mutant& m : few_mutants(dir, f.routing_capture, 2934)) {
    write_bytes(f.routing_capture, m.bytes);
    const Shot s = screenshot(dir.path.string(), "--screenshot tomoe --run " + std::to_string(id));
    INFO(m.how << ": exit " << s.exit_code << ", " << s.stats.dump() << "\n" << s.err);
    CHECK(s.exit_code == 0);
    REQUIRE(s.stats.is_object());
    CHECK(s.stats["plots"].get<int>() == 4);  // the conversion's plots need no capture
  }
  write_bytes(f.routing_capture, original);
}

#endif
