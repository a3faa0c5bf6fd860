#include "viewer/app/viewer_app.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "viewer/app/panel.h"
#include "viewer/app/viewer_context.h"
#include "viewer/plot/heatmap_texture.h"
#include "viewer/plot/plot.h"
#include "viewer/plot/png_export.h"

namespace moxlab::viewer {

namespace {

void glfw_error(int code, const char* what) { std::fprintf(stderr, "moxlab-viewer: GLFW error %d: %s\n", code, what); }

void status_bar(ViewerContext& ctx, double fps) {
  ImGui::Separator();
  const auto& cat = ctx.catalog;
  if (!cat.error().empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 110, 90, 255));
    ImGui::TextUnformatted(cat.error().c_str());
    ImGui::PopStyleColor();
  } else {
    ImGui::Text("%s  |  %zu runs, %zu sweeps  |  %zu selected  |  focus: %s  |  %.0f fps", cat.path().c_str(),
                cat.runs().size(), cat.sweeps().size(), ctx.selected.size(),
                ctx.focus ? ("run " + std::to_string(ctx.focus)).c_str() : "none", fps);
  }
  if (!ctx.last_export.empty()) {
    ImGui::SameLine();
    ImGui::Text("  |  export: %s", ctx.last_export.c_str());
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// What the options name must exist before a window opens: the panel, and the runs (unless the store
// itself cannot be read yet: the app shows that and retries).
void check_options(const AppOptions& options, const ViewerContext& ctx, const std::vector<std::unique_ptr<Panel>>& panels) {
  const std::string want = options.bench_fps ? "bench" : options.screenshot;
  if (!want.empty() && std::none_of(panels.begin(), panels.end(), [&](const auto& p) { return p->id() == want; })) {
    std::string ids;
    for (const auto& p : panels) ids += (ids.empty() ? "" : ", ") + p->id();
    throw Error("unknown panel '" + want + "' (panels: " + ids + ")");
  }
  if (!ctx.catalog.error().empty()) return;
  std::vector<std::int64_t> wanted = options.select;
  if (options.run > 0) wanted.push_back(options.run);
  const auto& runs = ctx.catalog.runs();
  for (const std::int64_t id : wanted) {
    if (ctx.catalog.find(id)) continue;
    const std::string have = runs.empty() ? "it has no runs"
                                          : "its runs are " + std::to_string(runs.front().run.id) + ".." + std::to_string(runs.back().run.id);
    throw Error("run " + std::to_string(id) + " is not in the store " + options.db + " (" + have + ")");
  }
}

}  // namespace

int run_viewer(const AppOptions& options) {
  ViewerContext ctx(options.db);
  ctx.tables_dir = options.tables_dir;
  ctx.args = options.args;
  ctx.selected.insert(options.select.begin(), options.select.end());
  if (options.run > 0) {
    ctx.selected.insert(options.run);
    ctx.focus = options.run;
  }
  ctx.catalog.refresh(true);
  auto panels = make_panels();
  check_options(options, ctx, panels);
  const std::string want = options.bench_fps ? "bench" : options.screenshot;

  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) throw Error("cannot start GLFW (no display? run under xvfb-run -a)");
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow* window = glfwCreateWindow(options.width, options.height, "moxlab-viewer", nullptr, nullptr);
  if (!window) {
    glfwTerminate();
    throw Error("cannot open an OpenGL 3.3 window (no display or no OpenGL driver)");
  }
  glfwMakeContextCurrent(window);
  const bool headless = !options.screenshot.empty() || options.bench_fps;
  glfwSwapInterval(headless ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini litter in the working directory
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");

  set_export_dir(options.export_dir);

  using clock = std::chrono::steady_clock;
  auto last_refresh = clock::now();
  std::vector<double> frame_ms;
  double fps = 0;
  int frame = 0, exit_code = 0;
  const int last_frame = options.bench_fps ? 2 * options.bench_frames : options.frames;
  if (options.bench_fps) ctx.args["bench"] = "baseline";
  while (!glfwWindowShouldClose(window)) {
    const auto t0 = clock::now();
    glfwPollEvents();
    if (t0 - last_refresh > std::chrono::seconds(1)) {
      if (ctx.catalog.refresh()) ++ctx.generation;
      last_refresh = t0;
    }
    // The screenshot frame: optionally every plot exports itself too (its menu's Export PNG).
    set_export_every_plot(options.export_plots && !options.screenshot.empty() && frame + 1 >= last_frame);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    plot_stats() = {};
    ctx.notes.clear();

    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGui::Begin("moxlab", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus |
                     ImGuiWindowFlags_NoSavedSettings);
    const float status_h = ImGui::GetFrameHeightWithSpacing() + 4;
    if (ImGui::BeginTabBar("panels")) {
      for (auto& panel : panels) {
        const bool forced = !want.empty() && panel->id() == want && frame < 2;
        if (panel->hidden() && panel->id() != want) continue;
        if (ImGui::BeginTabItem(panel->title().c_str(), nullptr, forced ? ImGuiTabItemFlags_SetSelected : 0)) {
          ImGui::BeginChild(("body_" + panel->id()).c_str(), ImVec2(0, -status_h));
          panel->draw(ctx);
          ImGui::EndChild();
          ImGui::EndTabItem();
        }
      }
      ImGui::EndTabBar();
    }
    status_bar(ctx, fps);
    ImGui::End();

    ImGui::Render();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    const float scale = ImGui::GetIO().DisplayFramebufferScale.x;
    std::vector<std::string> exported = flush_png_requests(fb_h, scale);
    if (!exported.empty()) ctx.last_export = exported.back();
    collect_heatmap_textures();

    ++frame;
    if (!options.screenshot.empty() && frame >= last_frame) {
      write_framebuffer_png(fb_w, fb_h, options.out);
      const PlotStats& s = plot_stats();
      nlohmann::json line = {{"panel", options.screenshot}, {"plots", s.plots},     {"series", s.series},
                             {"points", s.points},          {"cells", s.cells},     {"rows", s.rows},          {"exported", exported},
                             {"messages", ctx.notes},
                             {"out", options.out}};
      std::cout << line.dump() << std::endl;
      glfwSetWindowShouldClose(window, 1);
    }
    glfwSwapBuffers(window);
    const double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    frame_ms.push_back(ms);
    if (frame_ms.size() >= 30) fps = 1000.0 / median({frame_ms.end() - 30, frame_ms.end()});
    if (options.bench_fps && frame == last_frame / 2) ctx.args["bench"] = "full";
    if (options.bench_fps && frame >= last_frame) {
      // First half: the empty panel (the baseline: ImGui, GL and Xvfb alone); second half: the full
      // panel. The first 10 frames of each half build caches and textures: steady state after them.
      const std::size_t half = frame_ms.size() / 2;
      std::vector<double> base(frame_ms.begin() + 10, frame_ms.begin() + half), full(frame_ms.begin() + half + 10, frame_ms.end());
      const double base_med = median(base), full_med = median(full);
      std::sort(full.begin(), full.end());
      const PlotStats& s = plot_stats();
      nlohmann::json line = {{"frames", full.size()},
                             {"baseline_median_ms", base_med},
                             {"median_ms", full_med},
                             {"p90_ms", full[full.size() * 9 / 10]},
                             {"median_fps", 1000.0 / full_med},
                             {"ratio_to_baseline", full_med / base_med},
                             {"points_drawn", s.points},
                             {"cells", s.cells}};
      std::cout << line.dump() << std::endl;
      glfwSetWindowShouldClose(window, 1);
    }
  }

  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace moxlab::viewer
