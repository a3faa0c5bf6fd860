// moxlab-viewer's window: GLFW + OpenGL 3 + Dear ImGui, the registered panels as tabs, a status bar,
// live refresh of the run store (once a second, only when the files changed).
//
// Headless mode (--screenshot): selects the run, opens the panel, renders a few frames, writes the
// window to a PNG and prints one JSON line of what was drawn ({"panel", "plots", "series", "points",
// "cells", "messages"}). Benchmark mode (--bench-fps) renders the hidden "bench" panel (a 1e6-point
// series and a 4096 x 1024 heat map) without vsync and prints frame-time statistics.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace moxlab::viewer {

struct AppOptions {
  std::string db = "runs/runs.db";
  std::string screenshot;  // panel id; empty: interactive
  std::int64_t run = 0;    // run to select and focus (0: none)
  std::vector<std::int64_t> select;  // further runs to select (Curves overlays them)
  std::string out = "screenshot.png";
  int width = 1400, height = 900;
  int frames = 8;          // frames rendered before the screenshot
  bool bench_fps = false;
  int bench_frames = 240;
  std::string tables_dir;
  std::string export_dir = "viewer-exports";
  bool export_plots = false;  // with --screenshot: also export every plot of the panel as its own PNG
  std::map<std::string, std::string> args;  // panel options (e.g. table=mohd_table2, metric=val/ppl)
};

// Returns the process exit code; failures to start (no display, no OpenGL) are one-line errors.
int run_viewer(const AppOptions& options);

}  // namespace moxlab::viewer
