// moxlab-viewer [runs.db] [--screenshot PANEL --run ID --out FILE.png] [--bench-fps]
// Interactive by default; see viewer/README.md for the panels and the headless modes.
#include <CLI/CLI.hpp>

#include <iostream>

#include "core/common/error.h"
#include "experiments/cli/option_checks.h"
#include "viewer/app/panel.h"
#include "viewer/app/viewer_app.h"

#ifndef MOXLAB_SOURCE_DIR
#define MOXLAB_SOURCE_DIR "."
#endif

namespace {

// "runs, curves, ..., bench": every registered panel, so the help never lags behind the panels.
std::string panel_ids() {
  std::string ids;
  for (const auto& p : moxlab::viewer::make_panels()) ids += (ids.empty() ? "" : ", ") + p->id();
  return ids;
}

// --size WxH: two whole numbers inside the limits a window and a screenshot can have.
void parse_size(const std::string& size, int& width, int& height) {
  const auto x = size.find('x');
  long long w = 0, h = 0;
  const bool parsed = x != std::string::npos && moxlab::cli::detail::parse_integer(size.substr(0, x), w) &&
                      moxlab::cli::detail::parse_integer(size.substr(x + 1), h);
  moxlab::require(parsed, "--size: expected WxH in pixels (e.g. 1400x900), got '" + size + "'");
  moxlab::require(w >= 320 && h >= 240 && w <= 8192 && h <= 8192,
                  "--size: " + size + " is out of range (320x240 .. 8192x8192)");
  width = static_cast<int>(w);
  height = static_cast<int>(h);
}

}  // namespace

int main(int argc, char** argv) {
  using moxlab::viewer::AppOptions;
  AppOptions o;
  o.tables_dir = std::string(MOXLAB_SOURCE_DIR) + "/experiments/tables";
  std::string size;
  std::vector<std::string> args;
  CLI::App app{"moxlab-viewer: runs, curves, observations, routing, ToMoE conversions and tables of a moxlab run store"};
  app.add_option("db", o.db, "run store (SQLite)")->capture_default_str();
  app.add_option("--screenshot", o.screenshot, "render PANEL headless, write --out and exit (panels: " + panel_ids() + ")");
  app.add_option("--run", o.run, "select and focus this run")->check(moxlab::cli::run_id());
  app.add_option("--select", o.select, "also select these runs (comma-separated ids)")->delimiter(',')->check(moxlab::cli::run_id());
  app.add_option("--out", o.out, "PNG written by --screenshot")->capture_default_str();
  app.add_option("--size", size, "window size WxH (default 1400x900)");
  app.add_option("--frames", o.frames, "frames rendered before the screenshot")->check(moxlab::cli::integer_in(2, 1000))->capture_default_str();
  app.add_flag("--bench-fps", o.bench_fps, "render a 1e6-point series and a 4096x1024 heat map; print frame times");
  app.add_option("--bench-frames", o.bench_frames, "frames of each half of --bench-fps (empty baseline, then full)")
      ->check(moxlab::cli::integer_in(20, 100000))->capture_default_str();
  app.add_option("--tables", o.tables_dir, "folder of table specs for the Tables panel")->capture_default_str();
  app.add_option("--export-dir", o.export_dir, "where plot exports go")->capture_default_str();
  app.add_flag("--export-plots", o.export_plots, "with --screenshot: also write every plot of the panel as its own PNG");
  app.add_option("--arg", args, "panel option KEY=VALUE (table=mohd_table2, sweep=mohd_tiny, metric=val/ppl, "
                                "group=run.variant, layer=1, tap=blocks.1.ffn.in, view=heatmap, value=score)");
  try {
    app.parse(argc, argv);
    if (!size.empty()) parse_size(size, o.width, o.height);
    for (const auto& a : args) {
      const auto eq = a.find('=');
      moxlab::require(eq != std::string::npos && eq > 0, "--arg: expected KEY=VALUE, got '" + a + "'");
      o.args[a.substr(0, eq)] = a.substr(eq + 1);
    }
    return moxlab::viewer::run_viewer(o);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "moxlab-viewer: error: " << e.what() << "\n";
    return e.get_exit_code();
  } catch (const std::exception& e) {
    std::cerr << "moxlab-viewer: error: " << e.what() << "\n";
    return 1;
  }
}
