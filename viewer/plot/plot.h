// The viewer's plotting module, drawn with ImDrawList (ImPlot is not packaged in Debian bookworm).
//
//   PlotOptions opt;  opt.title = "Activation flow";  opt.x_label = "tap";
//   Plot p("##flow", opt);
//   p.line("layer 0", xs, ys, n, palette(0));   // x ascending; long series are min/max-downsampled
//   p.band("seeds", xs, lo, hi, n, palette(0));  // filled between lo and hi
//   p.bars("attn", values, palette(1));          // one bar per category; several calls = grouped bars
//   p.boxes("widths", stats, palette(2));        // one box per category (min, quartiles, median, max)
//   p.heatmap("probs", values, rows, cols, 0, 1); // a texture, with a colour bar
//   p.end();                                      // axes, ticks, legend, hover tooltip, interaction
//
// Data passed by pointer must stay alive until end() (immediate mode: the caller's locals do).
// Interaction: wheel zooms about the cursor (Shift: x only, Ctrl: y only), left drag pans,
// double-click fits the data, a click on a legend entry hides/shows the series, right click opens a
// menu (fit, log axes, export PNG). Each plot keeps its view in a map keyed by its ImGui id.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

#include "viewer/model/box_stats.h"
#include "viewer/model/colormap.h"
#include "viewer/model/downsample.h"
#include "viewer/model/ticks.h"

namespace moxlab::viewer {

struct PlotOptions {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  bool y_from_zero = false;                 // auto-fit includes y = 0 (bar charts do always)
  std::vector<std::string> x_categories;    // category axis: bars and heat-map columns
  std::vector<std::string> y_categories;    // heat-map rows
  float height = 300;                       // pixels; width fills the available region
  float width = -1;                         // -1: available width
  std::size_t legend_max = 12;              // legend entries shown (the rest summarised as "+N more")
  bool legend_outside = false;              // legend right of the plot area (dense bars it would cover)
};

// Counts of what was drawn in the current frame (reset by the app each frame): tests and the
// screenshot mode use them to tell an empty panel from a drawn one.
struct PlotStats {
  int plots = 0, series = 0;
  long long points = 0, cells = 0;
  long long rows = 0;  // table rows drawn (Runs, Tables)
};
PlotStats& plot_stats();

class Plot {
 public:
  Plot(const char* id, PlotOptions options);
  Plot(const Plot&) = delete;
  Plot& operator=(const Plot&) = delete;
  ~Plot();

  void line(const std::string& name, const double* x, const double* y, std::size_t n, Rgb colour, float thickness = 1.5f);
  void line(const std::string& name, const std::vector<double>& x, const std::vector<double>& y, Rgb colour,
            float thickness = 1.5f) {
    line(name, x.data(), y.data(), std::min(x.size(), y.size()), colour, thickness);
  }
  void band(const std::string& name, const double* x, const double* lo, const double* hi, std::size_t n, Rgb colour);
  void bars(const std::string& name, const std::vector<double>& values, Rgb colour);
  // Box plot per category: whisker min..max, box q1..q3, median line; shares the category slots with
  // bars (grouped side by side). Hover gives all five numbers.
  void boxes(const std::string& name, const std::vector<BoxStats>& boxes, Rgb colour);
  // values: [rows, cols] row-major; NaN cells are drawn grey. Colour = viridis((v - vmin) / (vmax - vmin)).
  // The colour-mapped texture is cached under content_key (plus shape and range): pass a key that
  // changes whenever the values do (e.g. file path + tap).
  void heatmap(const std::string& name, const float* values, int rows, int cols, double vmin, double vmax,
               const std::string& content_key);
  void end();

 private:
  struct Series;
  struct View;
  struct Frame;   // one end()'s rectangles, mouse state and data <-> pixel transforms
  struct Legend;  // the entries the legend shows and the room they take
  void fit(View& view) const;
  std::string signature() const;
  const XY& downsampled(const Series& s, double x0, double x1, int buckets) const;
  const std::string& export_name() const;
  // The steps of end(), in drawing order.
  // This plot's view, kept across frames; refitted when the data changed and the user has not moved it.
  View& view();
  Legend legend_entries() const;
  Frame layout(const View& view, const Legend& legend) const;  // also claims the plot's rectangle as an ImGui item
  std::vector<Tick> x_ticks(const Frame& f) const;
  std::vector<Tick> y_ticks(const Frame& f) const;
  void draw_axes(ImDrawList* dl, const Frame& f) const;
  void draw_series(ImDrawList* dl, const Frame& f, const View& view) const;
  void draw_heatmap(ImDrawList* dl, const Frame& f, const Series& s) const;
  void draw_bars(ImDrawList* dl, const Frame& f, const Series& s, int group, int groups) const;
  void draw_boxes(ImDrawList* dl, const Frame& f, const Series& s, int group, int groups) const;
  void draw_band(ImDrawList* dl, const Frame& f, const Series& s, int buckets) const;
  void draw_line(ImDrawList* dl, const Frame& f, const Series& s, int buckets) const;
  void draw_colour_bar(ImDrawList* dl, const Frame& f) const;
  void draw_legend(ImDrawList* dl, const Frame& f, const Legend& legend, View& view) const;
  void handle_input(const Frame& f, View& view) const;
  void draw_hover(ImDrawList* dl, const Frame& f, const View& view) const;
  std::string id_;
  PlotOptions options_;
  std::vector<Series> series_;
  bool ended_ = false;
};

}  // namespace moxlab::viewer
