#include "viewer/plot/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "viewer/model/downsample.h"
#include "viewer/model/ticks.h"
#include "viewer/plot/heatmap_texture.h"
#include "viewer/plot/png_export.h"

namespace moxlab::viewer {

namespace {

constexpr float kLeft = 64, kBottom = 38, kTop = 22, kRight = 12, kColourBar = 64;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string fmt(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

PlotStats& plot_stats() {
  static PlotStats stats;
  return stats;
}

struct Plot::Series {
  enum Kind { line, band, bars, boxes, heatmap } kind;
  std::string name;
  Rgb colour;
  float thickness = 1.5f;
  const double* x = nullptr;
  const double* y = nullptr;   // line: y; band: lo
  const double* hi = nullptr;  // band
  std::size_t n = 0;
  std::vector<double> values;  // bars
  std::vector<BoxStats> box;   // boxes
  const float* cells = nullptr;
  int rows = 0, cols = 0;
  double vmin = 0, vmax = 1;
  std::string key;  // heatmap content key
};

struct Plot::View {
  bool fitted = false;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  int log_x = -1, log_y = -1;  // -1: as the caller says; 0/1: the user's choice from the menu
  std::set<std::string> hidden;
  std::string data_signature;  // what the view was fitted to; a change refits unless the user moved it
  bool user_moved = false;
};

namespace {

// Downsampling a 1e6-point series costs milliseconds; while the view and the data stay the same the
// result is reused. The key holds the data's address and size and a few of its values, so a vector
// refilled in place with other numbers is noticed.
const XY& downsampled_cached(const double* x, const double* y, std::size_t n, double x0, double x1, int buckets) {
  static std::map<std::string, XY> cache;
  char key[256];
  std::snprintf(key, sizeof key, "%p:%p:%zu:%.17g:%.17g:%d:%.17g:%.17g:%.17g:%.17g", static_cast<const void*>(x),
                static_cast<const void*>(y), n, x0, x1, buckets, n ? x[0] : 0.0, n ? x[n - 1] : 0.0, n ? y[n / 2] : 0.0,
                n ? y[n - 1] : 0.0);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 256) cache.clear();
  return cache[key] = downsample_minmax(x, y, n, x0, x1, buckets);
}

}  // namespace

const XY& Plot::downsampled(const Series& s, double x0, double x1, int buckets) const {
  // Short series are cheap to redo and are often temporaries whose addresses get reused.
  if (s.n < 20000) {
    static XY scratch;
    scratch = downsample_minmax(s.x, s.y, s.n, x0, x1, buckets);
    return scratch;
  }
  return downsampled_cached(s.x, s.y, s.n, x0, x1, buckets);
}

Plot::Plot(const char* id, PlotOptions options) : id_(id), options_(std::move(options)) {}

// A plot left without end() (an exception unwinding the panel) draws nothing: its data may be gone.
Plot::~Plot() = default;

void Plot::line(const std::string& name, const double* x, const double* y, std::size_t n, Rgb colour, float thickness) {
  Series s{Series::line, name, colour, thickness};
  s.x = x;
  s.y = y;
  s.n = n;
  series_.push_back(std::move(s));
}

void Plot::band(const std::string& name, const double* x, const double* lo, const double* hi, std::size_t n, Rgb colour) {
  Series s{Series::band, name, colour};
  s.x = x;
  s.y = lo;
  s.hi = hi;
  s.n = n;
  series_.push_back(std::move(s));
}

void Plot::bars(const std::string& name, const std::vector<double>& values, Rgb colour) {
  Series s{Series::bars, name, colour};
  s.values = values;
  series_.push_back(std::move(s));
}

void Plot::boxes(const std::string& name, const std::vector<BoxStats>& boxes, Rgb colour) {
  Series s{Series::boxes, name, colour};
  s.box = boxes;
  series_.push_back(std::move(s));
}

void Plot::heatmap(const std::string& name, const float* values, int rows, int cols, double vmin, double vmax,
                   const std::string& content_key) {
  Series s{Series::heatmap, name, {}};
  s.key = content_key;
  s.cells = values;
  s.rows = rows;
  s.cols = cols;
  s.vmin = vmin;
  s.vmax = vmax;
  series_.push_back(std::move(s));
}

void Plot::fit(View& v) const {
  const bool log_x = v.log_x >= 0 ? v.log_x : options_.log_x;
  const bool log_y = v.log_y >= 0 ? v.log_y : options_.log_y;
  double x0 = kInf, x1 = -kInf, y0 = kInf, y1 = -kInf;
  auto take_x = [&](double x) {
    if (std::isfinite(x) && (!log_x || x > 0)) x0 = std::min(x0, x), x1 = std::max(x1, x);
  };
  auto take_y = [&](double y) {
    if (std::isfinite(y) && (!log_y || y > 0)) y0 = std::min(y0, y), y1 = std::max(y1, y);
  };
  bool categorical = false;
  for (const auto& s : series_) {
    if (v.hidden.count(s.name)) continue;
    switch (s.kind) {
      case Series::line:
      case Series::band:
        for (std::size_t i = 0; i < s.n; ++i) {
          take_x(s.x[i]);
          take_y(s.y[i]);
          if (s.hi) take_y(s.hi[i]);
        }
        break;
      case Series::bars:
        categorical = true;
        take_x(-0.5);
        take_x(static_cast<double>(s.values.size()) - 0.5);
        take_y(0);
        for (double y : s.values) take_y(y);
        break;
      case Series::boxes:
        categorical = true;
        take_x(-0.5);
        take_x(static_cast<double>(s.box.size()) - 0.5);
        for (const auto& b : s.box) take_y(b.min), take_y(b.max);
        break;
      case Series::heatmap:
        take_x(-0.5);
        take_x(s.cols - 0.5);
        take_y(-0.5);
        take_y(s.rows - 0.5);
        break;
    }
  }
  if (options_.y_from_zero) take_y(0);
  if (!(x0 <= x1)) x0 = log_x ? 1 : 0, x1 = log_x ? 10 : 1;
  if (!(y0 <= y1)) y0 = log_y ? 1 : 0, y1 = log_y ? 10 : 1;
  if (x0 == x1) x0 -= log_x ? x0 * 0.5 : 0.5, x1 += log_x ? x1 : 0.5;
  if (y0 == y1) y0 -= log_y ? y0 * 0.5 : 0.5, y1 += log_y ? y1 : 0.5;
  // A little headroom on y (not on category or heat-map axes).
  const bool heat_only = std::all_of(series_.begin(), series_.end(), [](const Series& s) { return s.kind == Series::heatmap; });
  if (!heat_only) {
    if (log_y) {
      y0 /= 1.15, y1 *= 1.15;
    } else {
      const double pad = (y1 - y0) * 0.06;
      y1 += pad;
      if (!(categorical && y0 == 0) && !(options_.y_from_zero && y0 == 0)) y0 -= pad;
    }
  }
  v.x0 = x0, v.x1 = x1, v.y0 = y0, v.y1 = y1;
  v.fitted = true;
  v.user_moved = false;
}

std::string Plot::signature() const {
  // Cheap: sizes, end points and ranges, not every value (a 1e6-point series must not be scanned per frame).
  std::string sig = std::to_string(options_.x_categories.size()) + "/" + std::to_string(options_.y_categories.size());
  for (const auto& s : series_) {
    sig += "|" + std::to_string(static_cast<int>(s.kind)) + ":" + std::to_string(s.n);
    if (s.n) sig += ":" + fmt(s.x[0]) + ":" + fmt(s.x[s.n - 1]) + ":" + fmt(s.y[s.n - 1]);
    if (s.kind == Series::bars) {
      double sum = 0;
      for (double v : s.values) sum += std::isfinite(v) ? v : 0;
      sig += ":" + std::to_string(s.values.size()) + ":" + fmt(sum);
    }
    if (s.kind == Series::boxes) {
      double sum = 0;
      for (const auto& b : s.box) sum += std::isfinite(b.min + b.max) ? b.min + b.max : 0;
      sig += ":" + std::to_string(s.box.size()) + ":" + fmt(sum);
    }
    if (s.kind == Series::heatmap) sig += ":" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + ":" + s.key;
  }
  return sig;
}

// One end()'s geometry, the mouse's relation to it, and the data <-> pixel transforms. It holds the
// view as it was when the frame began: clicks, pans and zooms change the View for the next frame,
// while everything in this frame (hover included) is drawn with one transform.
struct Plot::Frame {
  ImVec2 outer_min, outer_max;  // the whole item: header, axes, plot area, colour bar, outside legend
  ImVec2 pmin, pmax;            // the plot area
  float line_h = 0;             // height of a header or legend line
  bool has_heat = false;
  bool hovered = false, active = false;
  bool in_plot = false;  // hovered, with the mouse over the plot area
  bool log_x = false, log_y = false;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // the view in data units
  double X0 = 0, X1 = 1, Y0 = 0, Y1 = 1;  // the same in axis units (log10 on a log axis)

  double tx(double x) const { return log_x ? std::log10(x) : x; }
  double ty(double y) const { return log_y ? std::log10(y) : y; }
  double ux(double t) const { return log_x ? std::pow(10.0, t) : t; }
  double uy(double t) const { return log_y ? std::pow(10.0, t) : t; }
  float px(double x) const { return static_cast<float>(pmin.x + (tx(x) - X0) / (X1 - X0) * (pmax.x - pmin.x)); }
  float py(double y) const { return static_cast<float>(pmax.y - (ty(y) - Y0) / (Y1 - Y0) * (pmax.y - pmin.y)); }
  double data_x(float p) const { return ux(X0 + (p - pmin.x) / (pmax.x - pmin.x) * (X1 - X0)); }
  double data_y(float p) const { return uy(Y0 + (pmax.y - p) / (pmax.y - pmin.y) * (Y1 - Y0)); }
};

// The series the legend lists (the first of each name, heat maps excluded) and the room it takes.
struct Plot::Legend {
  std::vector<const Series*> entries;
  std::size_t more = 0;   // entries beyond legend_max, summarised in one line
  std::string more_text;  // "+N more", or empty
  float text_width = 0;   // the widest line
  float reserve = 0;      // width kept right of the plot area (legend_outside)
};

void Plot::end() {
  ended_ = true;
  ImGui::PushID(id_.c_str());
  View& v = view();
  const Legend legend = legend_entries();
  const Frame f = layout(v, legend);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_axes(dl, f);
  draw_series(dl, f, v);
  draw_colour_bar(dl, f);
  draw_legend(dl, f, legend, v);
  handle_input(f, v);
  if (export_every_plot()) request_png(f.outer_min, f.outer_max, export_name());
  draw_hover(dl, f, v);
  ImGui::PopID();
}

Plot::View& Plot::view() {
  const ImGuiID gid = ImGui::GetID("plot");
  // Views live as long as the app: a plot's zoom survives switching panels.
  static std::map<ImGuiID, std::unique_ptr<View>> views;
  auto& slot = views[gid];
  if (!slot) slot = std::make_unique<View>();
  View& v = *slot;
  const std::string sig = signature();
  if (!v.fitted || (sig != v.data_signature && !v.user_moved)) fit(v);
  v.data_signature = sig;
  return v;
}

const std::string& Plot::export_name() const { return options_.title.empty() ? id_ : options_.title; }

Plot::Legend Plot::legend_entries() const {
  Legend l;
  std::set<std::string> seen;
  for (const auto& s : series_)
    if (s.kind != Series::heatmap && !s.name.empty() && seen.insert(s.name).second) l.entries.push_back(&s);
  l.more = l.entries.size() > options_.legend_max ? l.entries.size() - options_.legend_max : 0;
  l.entries.resize(l.entries.size() - l.more);
  l.more_text = l.more ? "+" + std::to_string(l.more) + " more" : "";
  l.text_width = ImGui::CalcTextSize(l.more_text.c_str()).x;
  for (const auto* s : l.entries) l.text_width = std::max(l.text_width, ImGui::CalcTextSize(s->name.c_str()).x);
  l.reserve = options_.legend_outside && !l.entries.empty() ? l.text_width + 36 : 0;
  return l;
}

Plot::Frame Plot::layout(const View& v, const Legend& legend) const {
  Frame f;
  f.log_x = v.log_x >= 0 ? v.log_x : options_.log_x;
  f.log_y = v.log_y >= 0 ? v.log_y : options_.log_y;
  f.has_heat = std::any_of(series_.begin(), series_.end(), [](const Series& s) { return s.kind == Series::heatmap; });
  const float width = options_.width > 0 ? options_.width : ImGui::GetContentRegionAvail().x;
  const ImVec2 size(std::max(width, 120.0f), std::max(options_.height, 80.0f));
  f.outer_min = ImGui::GetCursorScreenPos();
  f.outer_max = ImVec2(f.outer_min.x + size.x, f.outer_min.y + size.y);
  // Header: the title on the first line, the y label on the second.
  f.line_h = ImGui::GetTextLineHeight() + 2;
  const float top = 4 + f.line_h * ((options_.title.empty() ? 0 : 1) + (options_.y_label.empty() ? 0 : 1)) + 4;
  // Left margin: numeric ticks fit in kLeft; category labels (heat-map rows) may need more.
  float left = kLeft;
  for (const auto& c : options_.y_categories)
    left = std::max(left, std::min(150.0f, ImGui::CalcTextSize(c.substr(0, 16).c_str()).x + 14));
  f.pmin = ImVec2(f.outer_min.x + left, f.outer_min.y + std::max(kTop, top));
  f.pmax = ImVec2(f.outer_max.x - kRight - (f.has_heat ? kColourBar : 0) - legend.reserve, f.outer_max.y - kBottom);
  ImGui::InvisibleButton("canvas", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  f.hovered = ImGui::IsItemHovered();
  f.active = ImGui::IsItemActive();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  f.in_plot = f.hovered && mouse.x >= f.pmin.x && mouse.x <= f.pmax.x && mouse.y >= f.pmin.y && mouse.y <= f.pmax.y;
  f.x0 = v.x0, f.x1 = v.x1, f.y0 = v.y0, f.y1 = v.y1;
  f.X0 = f.tx(v.x0), f.X1 = f.tx(v.x1), f.Y0 = f.ty(v.y0), f.Y1 = f.ty(v.y1);
  return f;
}

std::vector<Tick> Plot::x_ticks(const Frame& f) const {
  const auto& xcat = options_.x_categories;
  if (!xcat.empty() && f.x1 - f.x0 <= 400) {
    // Category labels, thinned to every k-th when they would overlap (hover shows each one).
    std::vector<Tick> ticks;
    float widest = 0;
    for (const auto& c : xcat) widest = std::max(widest, ImGui::CalcTextSize(c.substr(0, 14).c_str()).x + 8);
    const double spacing = (f.pmax.x - f.pmin.x) / std::max(1.0, f.x1 - f.x0);
    const int every = std::max(1, static_cast<int>(std::ceil(widest / spacing)));
    for (int i = std::max(0, static_cast<int>(std::ceil(f.x0))); i <= std::min<int>(xcat.size() - 1, std::floor(f.x1)); ++i)
      if (i % every == 0) ticks.push_back({static_cast<double>(i), xcat[i]});
    return ticks;
  }
  const int max_ticks = std::max(2, static_cast<int>((f.pmax.x - f.pmin.x) / 70));
  return f.log_x ? log_ticks(f.x0, f.x1, max_ticks) : linear_ticks(f.x0, f.x1, max_ticks);
}

std::vector<Tick> Plot::y_ticks(const Frame& f) const {
  const auto& ycat = options_.y_categories;
  const int max_ticks = std::max(2, static_cast<int>((f.pmax.y - f.pmin.y) / 28));
  if (!ycat.empty() && (f.y1 - f.y0) <= max_ticks * 1.5) {
    std::vector<Tick> ticks;
    for (int i = std::max(0, static_cast<int>(std::ceil(f.y0))); i <= std::min<int>(ycat.size() - 1, std::floor(f.y1)); ++i)
      ticks.push_back({static_cast<double>(i), ycat[i]});
    return ticks;
  }
  return f.log_y ? log_ticks(f.y0, f.y1, max_ticks) : linear_ticks(f.y0, f.y1, max_ticks);
}

// The plot area's background, the title, the grid, ticks with their labels and the axis labels.
void Plot::draw_axes(ImDrawList* dl, const Frame& f) const {
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 grid_col = IM_COL32(128, 128, 128, 50);
  dl->AddRectFilled(f.pmin, f.pmax, IM_COL32(20, 20, 24, 255));
  if (!options_.title.empty()) dl->AddText(ImVec2(f.outer_min.x + 4, f.outer_min.y + 3), text_col, options_.title.c_str());
  dl->PushClipRect(f.outer_min, f.outer_max, true);
  const std::vector<Tick> xt = x_ticks(f), yt = y_ticks(f);
  for (const auto& t : xt) {
    const float x = f.px(t.value);
    if (x < f.pmin.x - 0.5f || x > f.pmax.x + 0.5f) continue;
    if (!f.has_heat) dl->AddLine(ImVec2(x, f.pmin.y), ImVec2(x, f.pmax.y), grid_col);
    dl->AddLine(ImVec2(x, f.pmax.y), ImVec2(x, f.pmax.y + 4), text_col);
    std::string label = t.label.size() > 14 ? t.label.substr(0, 13) + "." : t.label;
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(x - ts.x / 2, f.pmax.y + 5), text_col, label.c_str());
  }
  for (const auto& t : yt) {
    const float y = f.py(t.value);
    if (y < f.pmin.y - 0.5f || y > f.pmax.y + 0.5f) continue;
    if (!f.has_heat) dl->AddLine(ImVec2(f.pmin.x, y), ImVec2(f.pmax.x, y), grid_col);
    dl->AddLine(ImVec2(f.pmin.x - 4, y), ImVec2(f.pmin.x, y), text_col);
    std::string label = t.label.size() > 16 ? t.label.substr(0, 15) + "." : t.label;
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(f.pmin.x - 6 - ts.x, y - ts.y / 2), text_col, label.c_str());
  }
  if (!options_.x_label.empty()) {
    const ImVec2 ts = ImGui::CalcTextSize(options_.x_label.c_str());
    dl->AddText(ImVec2((f.pmin.x + f.pmax.x - ts.x) / 2, f.outer_max.y - ts.y - 2), text_col, options_.x_label.c_str());
  }
  if (!options_.y_label.empty())  // the second header line, above the y axis
    dl->AddText(ImVec2(f.outer_min.x + 4, f.outer_min.y + 3 + f.line_h), IM_COL32(170, 170, 170, 255), options_.y_label.c_str());
  dl->PopClipRect();
}

// The visible series in the order they were added, clipped to the plot area, then the area's border.
void Plot::draw_series(ImDrawList* dl, const Frame& f, const View& v) const {
  ++plot_stats().plots;
  dl->PushClipRect(f.pmin, f.pmax, true);
  // Bars and boxes share each category's slot, one group per visible series, side by side.
  int groups = 0;
  for (const auto& s : series_) groups += (s.kind == Series::bars || s.kind == Series::boxes) && !v.hidden.count(s.name);
  int group = 0;
  const int buckets = std::max(1, static_cast<int>(f.pmax.x - f.pmin.x));
  for (const auto& s : series_) {
    if (v.hidden.count(s.name)) continue;
    ++plot_stats().series;
    switch (s.kind) {
      case Series::heatmap: draw_heatmap(dl, f, s); break;
      case Series::bars: draw_bars(dl, f, s, group++, groups); break;
      case Series::boxes: draw_boxes(dl, f, s, group++, groups); break;
      case Series::band: draw_band(dl, f, s, buckets); break;
      case Series::line: draw_line(dl, f, s, buckets); break;
    }
  }
  dl->PopClipRect();
  dl->AddRect(f.pmin, f.pmax, IM_COL32(140, 140, 140, 255));
}

void Plot::draw_heatmap(ImDrawList* dl, const Frame& f, const Series& s) const {
  const std::string key = s.key + "#" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + "#" + fmt(s.vmin) + ":" +
                          fmt(s.vmax);
  ImTextureID tex = heatmap_texture(key, s.cells, s.rows, s.cols, s.vmin, s.vmax);
  // Row r is centred on y = r (row 0 at the bottom, as the y ticks say): the texture's first row
  // (v = 0) goes to the bottom edge.
  const ImVec2 top_left(f.px(-0.5), f.py(s.rows - 0.5)), bottom_right(f.px(s.cols - 0.5), f.py(-0.5));
  dl->AddImage(tex, top_left, bottom_right, ImVec2(0, 1), ImVec2(1, 0));
  plot_stats().cells += static_cast<long long>(s.rows) * s.cols;
}

void Plot::draw_bars(ImDrawList* dl, const Frame& f, const Series& s, int group, int groups) const {
  const ImU32 col = pack_rgba(s.colour);
  const double slot = 0.8 / std::max(1, groups);
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    if (!std::isfinite(s.values[i])) continue;
    const double left = static_cast<double>(i) - 0.4 + slot * group;
    const double base = f.log_y ? f.y0 : 0.0;
    dl->AddRectFilled(ImVec2(f.px(left), f.py(s.values[i])), ImVec2(f.px(left + slot * 0.92), f.py(base)), col);
  }
  plot_stats().points += static_cast<long long>(s.values.size());
}

void Plot::draw_boxes(ImDrawList* dl, const Frame& f, const Series& s, int group, int groups) const {
  const ImU32 col = pack_rgba(s.colour);
  const double slot = 0.8 / std::max(1, groups);
  const ImU32 fill = pack_rgba(s.colour, 0.35f), median = pack_rgba({1.0f, 1.0f, 1.0f}, 0.9f);
  for (std::size_t i = 0; i < s.box.size(); ++i) {
    const BoxStats& b = s.box[i];
    if (!std::isfinite(b.min + b.q1 + b.median + b.q3 + b.max)) continue;
    const double mid = static_cast<double>(i) - 0.4 + slot * (group + 0.5);
    const float x = f.px(mid), l = f.px(mid - slot * 0.3), r = f.px(mid + slot * 0.3);
    const float cap_l = f.px(mid - slot * 0.15), cap_r = f.px(mid + slot * 0.15);
    dl->AddLine(ImVec2(x, f.py(b.min)), ImVec2(x, f.py(b.q1)), col, 1.5f);  // whiskers
    dl->AddLine(ImVec2(x, f.py(b.q3)), ImVec2(x, f.py(b.max)), col, 1.5f);
    dl->AddLine(ImVec2(cap_l, f.py(b.min)), ImVec2(cap_r, f.py(b.min)), col, 1.5f);
    dl->AddLine(ImVec2(cap_l, f.py(b.max)), ImVec2(cap_r, f.py(b.max)), col, 1.5f);
    // A box of zero height (all experts equally wide) still shows as a line.
    dl->AddRectFilled(ImVec2(l, f.py(b.q3) - 1), ImVec2(r, f.py(b.q1) + 1), fill);
    dl->AddRect(ImVec2(l, f.py(b.q3) - 1), ImVec2(r, f.py(b.q1) + 1), col);
    dl->AddLine(ImVec2(l, f.py(b.median)), ImVec2(r, f.py(b.median)), median, 2.0f);
  }
  plot_stats().points += static_cast<long long>(s.box.size());
}

void Plot::draw_band(ImDrawList* dl, const Frame& f, const Series& s, int buckets) const {
  const ImU32 fill = pack_rgba(s.colour, 0.25f);
  const std::size_t stride = std::max<std::size_t>(1, s.n / (2 * buckets));
  for (std::size_t i = 0; i + 1 < s.n; i += stride) {
    const std::size_t j = std::min(s.n - 1, i + stride);
    if (!std::isfinite(s.y[i] + s.hi[i] + s.y[j] + s.hi[j])) continue;
    const ImVec2 q[4] = {ImVec2(f.px(s.x[i]), f.py(s.hi[i])), ImVec2(f.px(s.x[j]), f.py(s.hi[j])),
                         ImVec2(f.px(s.x[j]), f.py(s.y[j])), ImVec2(f.px(s.x[i]), f.py(s.y[i]))};
    dl->AddConvexPolyFilled(q, 4, fill);
  }
  plot_stats().points += static_cast<long long>(s.n);
}

// Lines: min/max-downsampled to the pixel columns of the visible range; points a log axis cannot
// show break the line.
void Plot::draw_line(ImDrawList* dl, const Frame& f, const Series& s, int buckets) const {
  const ImU32 col = pack_rgba(s.colour);
  const XY& d = downsampled(s, f.x0, f.x1, buckets);
  std::vector<ImVec2> pts;
  pts.reserve(d.x.size());
  auto flush = [&]() {
    if (pts.size() >= 2) dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, s.thickness);
    else if (pts.size() == 1) dl->AddCircleFilled(pts[0], 2.5f, col);
    pts.clear();
  };
  for (std::size_t i = 0; i < d.x.size(); ++i) {
    if ((f.log_x && d.x[i] <= 0) || (f.log_y && d.y[i] <= 0)) {
      flush();
      continue;
    }
    pts.emplace_back(f.px(d.x[i]), f.py(d.y[i]));
  }
  flush();
  if (d.x.size() <= 40)  // short series: mark the points
    for (std::size_t i = 0; i < d.x.size(); ++i)
      if ((!f.log_x || d.x[i] > 0) && (!f.log_y || d.y[i] > 0)) dl->AddCircleFilled(ImVec2(f.px(d.x[i]), f.py(d.y[i])), 2.0f, col);
  plot_stats().points += static_cast<long long>(d.x.size());
}

// The colour bar of the first heat map with a non-empty range, right of the plot area.
void Plot::draw_colour_bar(ImDrawList* dl, const Frame& f) const {
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  for (const auto& s : series_) {
    if (s.kind != Series::heatmap || !(s.vmax > s.vmin)) continue;
    const float cx0 = f.pmax.x + 10, cx1 = f.pmax.x + 24;
    const int steps = 64;
    for (int i = 0; i < steps; ++i) {
      const float y0 = f.pmax.y - (f.pmax.y - f.pmin.y) * i / steps, y1 = f.pmax.y - (f.pmax.y - f.pmin.y) * (i + 1) / steps;
      dl->AddRectFilled(ImVec2(cx0, y1), ImVec2(cx1, y0), pack_rgba(viridis((i + 0.5) / steps)));
    }
    dl->AddRect(ImVec2(cx0, f.pmin.y), ImVec2(cx1, f.pmax.y), IM_COL32(140, 140, 140, 255));
    for (const auto& t : linear_ticks(s.vmin, s.vmax, 5)) {
      const float y = static_cast<float>(f.pmax.y - (t.value - s.vmin) / (s.vmax - s.vmin) * (f.pmax.y - f.pmin.y));
      dl->AddLine(ImVec2(cx1, y), ImVec2(cx1 + 3, y), text_col);
      dl->AddText(ImVec2(cx1 + 5, y - 6), text_col, t.label.c_str());
    }
    return;
  }
}

// The legend, top right inside the plot area (or right of it with legend_outside). A click on an
// entry hides or shows its series from the next frame on.
void Plot::draw_legend(ImDrawList* dl, const Frame& f, const Legend& legend, View& v) const {
  if (legend.entries.empty()) return;
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  const ImGuiIO& io = ImGui::GetIO();
  const float line_h = f.line_h;
  const float lright = options_.legend_outside ? f.pmax.x + legend.reserve : f.pmax.x - 6;
  const ImVec2 lmax(lright, f.pmin.y + 6 + line_h * (legend.entries.size() + (legend.more ? 1 : 0)) + 4);
  const ImVec2 lmin(lmax.x - legend.text_width - 30, f.pmin.y + 6);
  dl->AddRectFilled(lmin, lmax, IM_COL32(30, 30, 36, 210));
  for (std::size_t i = 0; i < legend.entries.size(); ++i) {
    const Series& s = *legend.entries[i];
    const bool off = v.hidden.count(s.name) > 0;
    const float y = lmin.y + 3 + line_h * i;
    dl->AddRectFilled(ImVec2(lmin.x + 6, y + 3), ImVec2(lmin.x + 20, y + line_h - 4), pack_rgba(s.colour, off ? 0.25f : 1.0f));
    dl->AddText(ImVec2(lmin.x + 25, y), off ? IM_COL32(120, 120, 120, 255) : text_col, s.name.c_str());
    if (f.hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left) && io.MousePos.x >= lmin.x && io.MousePos.x <= lmax.x &&
        io.MousePos.y >= y && io.MousePos.y < y + line_h) {
      if (off) v.hidden.erase(s.name);
      else v.hidden.insert(s.name);
    }
  }
  if (legend.more)
    dl->AddText(ImVec2(lmin.x + 25, lmax.y - line_h - 2), IM_COL32(160, 160, 160, 255), legend.more_text.c_str());
}

// Left drag pans, the wheel zooms about the cursor (Ctrl: y only, Shift: x only), a double click
// fits, a right click opens the menu. All of it moves the view from the frame's transform.
void Plot::handle_input(const Frame& f, View& v) const {
  const ImGuiIO& io = ImGui::GetIO();
  if (f.active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    const ImVec2 d = io.MouseDelta;
    const double dx = -d.x / (f.pmax.x - f.pmin.x) * (f.X1 - f.X0), dy = d.y / (f.pmax.y - f.pmin.y) * (f.Y1 - f.Y0);
    v.x0 = f.ux(f.X0 + dx), v.x1 = f.ux(f.X1 + dx), v.y0 = f.uy(f.Y0 + dy), v.y1 = f.uy(f.Y1 + dy);
    v.user_moved = true;
  }
  if (f.in_plot && io.MouseWheel != 0) {
    const double factor = std::pow(0.85, io.MouseWheel);
    const double cx = f.tx(f.data_x(io.MousePos.x)), cy = f.ty(f.data_y(io.MousePos.y));
    if (!io.KeyCtrl) v.x0 = f.ux(cx + (f.X0 - cx) * factor), v.x1 = f.ux(cx + (f.X1 - cx) * factor);
    if (!io.KeyShift) v.y0 = f.uy(cy + (f.Y0 - cy) * factor), v.y1 = f.uy(cy + (f.Y1 - cy) * factor);
    v.user_moved = true;
  }
  if (f.hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) fit(v);
  if (f.hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Right)) ImGui::OpenPopup("plot_menu");
  if (ImGui::BeginPopup("plot_menu")) {
    if (ImGui::MenuItem("Fit to data")) fit(v);
    bool lx = f.log_x, ly = f.log_y;
    if (ImGui::MenuItem("Log x", nullptr, &lx)) v.log_x = lx, fit(v);
    if (ImGui::MenuItem("Log y", nullptr, &ly)) v.log_y = ly, fit(v);
    if (ImGui::MenuItem("Export PNG")) request_png(f.outer_min, f.outer_max, export_name());
    ImGui::EndPopup();
  }
}

// While the mouse is over the plot area and not dragging: a crosshair, a ring on each line's nearest
// point, and a tooltip with the exact values under the cursor.
void Plot::draw_hover(ImDrawList* dl, const Frame& f, const View& v) const {
  if (!f.in_plot || f.active) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const auto& xcat = options_.x_categories;
  const auto& ycat = options_.y_categories;
  const double mx = f.data_x(mouse.x), my = f.data_y(mouse.y);
  dl->AddLine(ImVec2(mouse.x, f.pmin.y), ImVec2(mouse.x, f.pmax.y), IM_COL32(200, 200, 200, 80));
  std::string tip;
  for (const auto& s : series_) {
    if (v.hidden.count(s.name)) continue;
    if (s.kind == Series::line && s.n > 0) {
      const double* it = std::lower_bound(s.x, s.x + s.n, mx);
      std::size_t i = static_cast<std::size_t>(it - s.x);
      if (i == s.n || (i > 0 && mx - s.x[i - 1] < s.x[i] - mx)) i = i == 0 ? 0 : i - 1;
      if (std::fabs(f.px(s.x[i]) - mouse.x) > 40) continue;
      tip += s.name + ": x=" + fmt(s.x[i]) + "  y=" + fmt(s.y[i]) + "\n";
      dl->AddCircle(ImVec2(f.px(s.x[i]), f.py(s.y[i])), 4, pack_rgba(s.colour));
    } else if (s.kind == Series::bars) {
      const long i = std::lround(mx);
      if (i >= 0 && i < static_cast<long>(s.values.size()))
        tip += (xcat.size() > static_cast<std::size_t>(i) ? xcat[i] + " " : "") + s.name + ": " + fmt(s.values[i]) + "\n";
    } else if (s.kind == Series::boxes) {
      const long i = std::lround(mx);
      if (i >= 0 && i < static_cast<long>(s.box.size())) {
        const BoxStats& b = s.box[i];
        tip += (xcat.size() > static_cast<std::size_t>(i) ? xcat[i] + " " : "") + s.name + ": min " + fmt(b.min) +
               ", q1 " + fmt(b.q1) + ", median " + fmt(b.median) + ", q3 " + fmt(b.q3) + ", max " + fmt(b.max) + "\n";
      }
    } else if (s.kind == Series::heatmap) {
      const long c = std::lround(mx), r = std::lround(my);
      if (c >= 0 && c < s.cols && r >= 0 && r < s.rows) {
        const std::string rl = ycat.size() > static_cast<std::size_t>(r) ? ycat[r] : "row " + std::to_string(r);
        const std::string cl = xcat.size() > static_cast<std::size_t>(c) ? xcat[c] : "col " + std::to_string(c);
        tip += rl + ", " + cl + ": " + fmt(s.cells[static_cast<std::size_t>(r) * s.cols + c]) + "\n";
      }
    }
  }
  if (tip.empty()) tip = "x=" + fmt(mx) + "  y=" + fmt(my);
  else tip.pop_back();
  ImGui::SetTooltip("%s", tip.c_str());
}

}  // namespace moxlab::viewer
