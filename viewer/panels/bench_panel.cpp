// The hidden benchmark panel of `moxlab-viewer --bench-fps`: a 1e6-point line (a random walk) and a
// 4096 x 1024 heat map, the sizes the viewer must stay responsive with. Synthetic data on purpose: the
// point is the drawing cost, which does not depend on what the numbers mean.
#include <imgui.h>

#include <cmath>
#include <random>

#include "viewer/app/panel.h"
#include "viewer/app/viewer_context.h"
#include "viewer/plot/plot.h"

namespace moxlab::viewer {

namespace {

class BenchPanel : public Panel {
 public:
  std::string id() const override { return "bench"; }
  std::string title() const override { return "Bench"; }
  bool hidden() const override { return true; }

  void draw(ViewerContext& ctx) override {
    if (x_.empty()) make_data();
    if (ctx.args["bench"] == "baseline") return;  // the empty panel, measured first
    PlotOptions line;
    line.title = "1e6-point random walk (min/max downsampled to the plot width)";
    line.x_label = "i";
    line.height = 320;
    Plot a("##bench_line", line);
    a.line("walk", x_, y_, palette(0), 1.0f);
    a.end();
    PlotOptions heat;
    heat.title = "4096 x 1024 heat map (one texture)";
    heat.height = 380;
    Plot b("##bench_heat", heat);
    b.heatmap("cells", cells_.data(), kRows, kCols, -1.0, 1.0, "bench#cells");
    b.end();
  }

 private:
  static constexpr int kRows = 1024, kCols = 4096;
  std::vector<double> x_, y_;
  std::vector<float> cells_;

  void make_data() {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> step(0.0, 1.0);
    const std::size_t n = 1000000;
    x_.resize(n);
    y_.resize(n);
    double v = 0;
    for (std::size_t i = 0; i < n; ++i) x_[i] = static_cast<double>(i), y_[i] = (v += step(rng));
    cells_.resize(static_cast<std::size_t>(kRows) * kCols);
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) cells_[static_cast<std::size_t>(r) * kCols + c] = static_cast<float>(std::sin(r * 0.02) * std::cos(c * 0.005));
  }
};

}  // namespace

MOXLAB_VIEWER_PANEL(BenchPanel, 1000)

}  // namespace moxlab::viewer
