// End to end: moxlab-viewer's headless screenshots (under xvfb-run) of every panel over runs the CLI
// produced (micro dense and MoHD models, observed and routed; a micro ToMoE conversion, routed): each
// panel draws plots or rows, the PNG is not blank, two runs give different pictures, and bad input
// (missing store, a run without observations or ToMoE conversion, a corrupt observations file, an
// unknown panel) is a message, never a crash.
#include "tests/torch_catch.h"

#include <stb_image.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/store/run_store.h"
#include "tests/cli/cli_support.h"

using namespace moxlab;
using namespace moxlab::testing;

#ifdef MOXLAB_VIEWER

namespace {

struct Shot {
  int exit_code = -1;
  nlohmann::json stats;
  std::string err;
  std::vector<unsigned char> pixels;  // RGB
  int width = 0, height = 0;
};

Shot screenshot(const std::string& dir, const std::string& args, const std::string& png) {
  const std::string cmd = "cd '" + dir + "' && xvfb-run -a -s '-screen 0 1280x800x24' '" MOXLAB_VIEWER "' " + args +
                          " --size 1280x800 --out '" + png + "' > .viewer_out 2> .viewer_err";
  const int status = std::system(cmd.c_str());
  Shot s;
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  std::ifstream err(dir + "/.viewer_err");
  s.err.assign(std::istreambuf_iterator<char>(err), {});
  std::ifstream out(dir + "/.viewer_out");
  std::string line;
  std::getline(out, line);
  s.stats = nlohmann::json::parse(line, nullptr, false);
  int channels = 0;
  if (unsigned char* data = stbi_load((dir + "/" + png).c_str(), &s.width, &s.height, &channels, 3)) {
    s.pixels.assign(data, data + static_cast<std::size_t>(s.width) * s.height * 3);
    stbi_image_free(data);
  }
  return s;
}

// Distinct colours in the image: a blank window has a handful, a plot many.
std::size_t colours(const Shot& s) {
  std::set<unsigned> seen;
  for (std::size_t i = 0; i + 2 < s.pixels.size(); i += 3) seen.insert(s.pixels[i] << 16 | s.pixels[i + 1] << 8 | s.pixels[i + 2]);
  return seen.size();
}

std::size_t differing_pixels(const Shot& a, const Shot& b) {
  if (a.pixels.size() != b.pixels.size()) return a.pixels.size() + b.pixels.size();
  std::size_t n = 0;
  for (std::size_t i = 0; i + 2 < a.pixels.size(); i += 3)
    n += a.pixels[i] != b.pixels[i] || a.pixels[i + 1] != b.pixels[i + 1] || a.pixels[i + 2] != b.pixels[i + 2];
  return n;
}

bool has_message(const Shot& s, const std::string& needle) {
  if (!s.stats.is_object()) return false;
  for (const auto& m : s.stats["messages"])
    if (m.get<std::string>().find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("moxlab-viewer renders every panel headless over real runs", "[e2e][viewer]") {
  if (std::system("command -v xvfb-run > /dev/null 2>&1") != 0) {
    WARN("SKIPPED: xvfb-run is not installed (apt install xvfb xauth)");
    return;
  }
  const std::string dir = scratch_dir("viewer_cli");
  write_micro_config(dir, 12);
  const std::string mohd = " --set model.attention=mohd --set model.ffn=mohd --set mohd.attn.sub_dims=4 --set mohd.attn.active=2"
                           " --set mohd.attn.shared=1 --set mohd.attn.fusion_groups=4 --set mohd.ffn.sub_dims=4"
                           " --set mohd.ffn.active=2 --set mohd.ffn.shared=1 --set mohd.ffn.fusion_groups=4 --set run.variant=mohd";
  for (const std::string& args : {std::string(" --set run.variant=dense"), std::string(" --set run.variant=dense --set train.seed=2"),
                                  mohd, mohd + " --set train.seed=2"}) {
    auto tr = run_cli("train --config micro.toml" + args, dir);
    INFO(tr.err);
    REQUIRE(tr.exit_code == 0);
  }
  for (int run : {1, 2}) REQUIRE(run_cli("observe --run " + std::to_string(run) + " --tokens 1024 --threads 1", dir).exit_code == 0);
  for (int run : {3, 4}) REQUIRE(run_cli("route --run " + std::to_string(run) + " --tokens-per-domain 64 --threads 1", dir).exit_code == 0);
  std::ofstream(dir + "/val.toml") << "title = \"val ppl by variant\"\n[layout]\nrows = [\"run.variant\"]\n"
                                      "[[column]]\nmetric = \"train_end/val/ppl\"\nlabel = \"val ppl\"\nbetter = \"lower\"\n"
                                      "[compare]\nreference = \"dense\"\n";  // the paired-difference column too
  const std::string db = "runs/runs.db";

  {  // every panel draws, and two runs differ
    struct Case {
      std::string panel;
      int run_a, run_b;
    };
    for (const Case& c : {Case{"curves", 1, 2}, Case{"observations", 1, 2}, Case{"routing", 3, 4}}) {
      INFO(c.panel);
      const Shot a = screenshot(dir, db + " --screenshot " + c.panel + " --run " + std::to_string(c.run_a), c.panel + "_a.png");
      const Shot b = screenshot(dir, db + " --screenshot " + c.panel + " --run " + std::to_string(c.run_b), c.panel + "_b.png");
      INFO(a.err << b.err << a.stats.dump());
      REQUIRE(a.exit_code == 0);
      REQUIRE(b.exit_code == 0);
      CHECK(a.stats["plots"].get<int>() >= 1);
      CHECK(a.stats["points"].get<long long>() + a.stats["cells"].get<long long>() >= 3);  // 3 evals of val/ppl
      CHECK(a.stats["messages"].empty());
      CHECK(a.width == 1280);
      CHECK(colours(a) > 40);
      CHECK(differing_pixels(a, b) > 500);
    }
    // Every plot's Export PNG, triggered headless: one file per plot of the panel.
    const Shot exp = screenshot(dir, db + " --screenshot observations --run 1 --export-plots --export-dir exports", "obs.png");
    REQUIRE(exp.exit_code == 0);
    CHECK(exp.stats["exported"].size() == static_cast<std::size_t>(exp.stats["plots"].get<int>()));
    for (const auto& path : exp.stats["exported"]) {
      int w = 0, h = 0, n = 0;
      CHECK(stbi_info((dir + "/" + path.get<std::string>()).c_str(), &w, &h, &n) == 1);
      CHECK(w > 200);
    }
    const Shot runs = screenshot(dir, db + " --screenshot runs --run 1", "runs.png");
    REQUIRE(runs.exit_code == 0);
    CHECK(runs.stats["rows"].get<int>() == 4);
    const Shot table = screenshot(dir, db + " --screenshot tables --arg table=val.toml", "tables.png");
    INFO(table.stats.dump());
    REQUIRE(table.exit_code == 0);
    CHECK(table.stats["rows"].get<int>() == 2);  // dense and mohd, two seeds each
    CHECK(table.stats["messages"].empty());
  }

  {  // bad input is a message in the app, never a crash
    const Shot missing = screenshot(dir, "nothing.db --screenshot runs", "missing.png");
    CHECK(missing.exit_code == 0);
    CHECK(has_message(missing, "no run store at nothing.db"));
    const Shot none = screenshot(dir, db + " --screenshot observations --run 3", "none.png");
    CHECK(none.exit_code == 0);
    CHECK(has_message(none, "run 3 has no observations file yet"));
    const Shot not_mohd = screenshot(dir, db + " --screenshot routing --run 1", "dense.png");
    CHECK(has_message(not_mohd, "run 1 has no routing file yet"));
    // Truncate run 2's observations file: the panel reports it instead of crashing.
    const std::string obs = RunStore(dir + "/" + db).artifacts(2, "observations").back().path;
    std::filesystem::resize_file(obs, std::filesystem::file_size(obs) / 3);
    const Shot corrupt = screenshot(dir, db + " --screenshot observations --run 2", "corrupt.png");
    CHECK(corrupt.exit_code == 0);
    CHECK(has_message(corrupt, "cannot read observations of run 2"));
    const Shot unknown = screenshot(dir, db + " --screenshot nosuch", "x.png");
    CHECK(unknown.exit_code == 1);
    CHECK(unknown.err.find("unknown panel 'nosuch'") != std::string::npos);
  }

  {  // ToMoE panel (Fig. 4/7, 5a, 8, 9; Tables 4/8/9): a micro conversion of run 1 becomes run 5
    const std::string ck = RunStore(dir + "/" + db).artifacts(1, "checkpoint").at(0).path;
    auto conv = run_cli("convert tomoe --checkpoint " + ck + " --active 0.6 --steps 4 --set tomoe.experts=4", dir);
    INFO(conv.err);
    REQUIRE(conv.exit_code == 0);
    const Shot unrouted = screenshot(dir, db + " --screenshot tomoe --run 5", "tomoe_unrouted.png");
    INFO(unrouted.err << unrouted.stats.dump());
    CHECK(unrouted.stats["plots"].get<int>() == 4);  // the conversion's plots need no capture
    CHECK(has_message(unrouted, "`moxlab route --run 5`"));
    REQUIRE(run_cli("route --run 5 --tokens-per-domain 32 --threads 1", dir).exit_code == 0);
    const Shot tomoe = screenshot(dir, db + " --screenshot tomoe --run 5 --arg layer=1 --arg domain=code", "tomoe.png");
    INFO(tomoe.err << tomoe.stats.dump());
    REQUIRE(tomoe.exit_code == 0);
    CHECK(tomoe.stats["messages"].empty());
    CHECK(tomoe.stats["plots"].get<int>() == 4);           // kept widths, union coverage, expert widths, Jaccard
    CHECK(tomoe.stats["cells"].get<long long>() == 4 * 4);  // the N x N Jaccard matrix of 4 experts
    // Bars 3 x 2 layers + 2 x 2, 2 boxes, 4 legend chips and the domain's 32 routed tokens.
    CHECK(tomoe.stats["points"].get<long long>() == 6 + 4 + 2 + 4 + 32);
    CHECK(colours(tomoe) > 40);
    const Shot dense = screenshot(dir, db + " --screenshot tomoe --run 1", "tomoe_dense.png");
    CHECK(dense.exit_code == 0);
    CHECK(has_message(dense, "run 1 has no tomoe_conversion file yet"));
  }
}

#endif
