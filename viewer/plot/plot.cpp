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

void Plot::end() {
  ended_ = true;
  ImGui::PushID(id_.c_str());
  const ImGuiID gid = ImGui::GetID("plot");
  // Views live as long as the app: a plot's zoom survives switching panels.
  static std::map<ImGuiID, std::unique_ptr<View>> views;
  auto& slot = views[gid];
  if (!slot) slot = std::make_unique<View>();
  View& v = *slot;
  const std::string sig = signature();
  if (!v.fitted || (sig != v.data_signature && !v.user_moved)) fit(v);
  v.data_signature = sig;
  const bool log_x = v.log_x >= 0 ? v.log_x : options_.log_x;
  const bool log_y = v.log_y >= 0 ? v.log_y : options_.log_y;
  const bool has_heat = std::any_of(series_.begin(), series_.end(), [](const Series& s) { return s.kind == Series::heatmap; });

  const float width = options_.width > 0 ? options_.width : ImGui::GetContentRegionAvail().x;
  const ImVec2 size(std::max(width, 120.0f), std::max(options_.height, 80.0f));
  const ImVec2 outer_min = ImGui::GetCursorScreenPos();
  const ImVec2 outer_max(outer_min.x + size.x, outer_min.y + size.y);
  // Header: the title on the first line, the y label on the second.
  const float line_h = ImGui::GetTextLineHeight() + 2;
  const float top = 4 + line_h * ((options_.title.empty() ? 0 : 1) + (options_.y_label.empty() ? 0 : 1)) + 4;
  // Legend entries (drawn top right inside the plot, or right of it with legend_outside); a click toggles a series.
  std::vector<const Series*> legend;
  std::set<std::string> seen;
  for (const auto& s : series_)
    if (s.kind != Series::heatmap && !s.name.empty() && seen.insert(s.name).second) legend.push_back(&s);
  const std::size_t more = legend.size() > options_.legend_max ? legend.size() - options_.legend_max : 0;
  legend.resize(legend.size() - more);
  const std::string more_text = more ? "+" + std::to_string(more) + " more" : "";
  float lw = ImGui::CalcTextSize(more_text.c_str()).x;
  for (const auto* s : legend) lw = std::max(lw, ImGui::CalcTextSize(s->name.c_str()).x);
  const float legend_reserve = options_.legend_outside && !legend.empty() ? lw + 36 : 0;
  // Left margin: numeric ticks fit in kLeft; category labels (heat-map rows) may need more.
  float left = kLeft;
  for (const auto& c : options_.y_categories)
    left = std::max(left, std::min(150.0f, ImGui::CalcTextSize(c.substr(0, 16).c_str()).x + 14));
  const ImVec2 pmin(outer_min.x + left, outer_min.y + std::max(kTop, top));
  const ImVec2 pmax(outer_max.x - kRight - (has_heat ? kColourBar : 0) - legend_reserve, outer_max.y - kBottom);
  ImGui::InvisibleButton("canvas", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImGuiIO& io = ImGui::GetIO();

  // Data <-> pixel transforms (log axes work in log10 space).
  auto tx = [&](double x) { return log_x ? std::log10(x) : x; };
  auto ty = [&](double y) { return log_y ? std::log10(y) : y; };
  auto ux = [&](double t) { return log_x ? std::pow(10.0, t) : t; };
  auto uy = [&](double t) { return log_y ? std::pow(10.0, t) : t; };
  const double X0 = tx(v.x0), X1 = tx(v.x1), Y0 = ty(v.y0), Y1 = ty(v.y1);
  auto px = [&](double x) { return static_cast<float>(pmin.x + (tx(x) - X0) / (X1 - X0) * (pmax.x - pmin.x)); };
  auto py = [&](double y) { return static_cast<float>(pmax.y - (ty(y) - Y0) / (Y1 - Y0) * (pmax.y - pmin.y)); };
  auto data_x = [&](float p) { return ux(X0 + (p - pmin.x) / (pmax.x - pmin.x) * (X1 - X0)); };
  auto data_y = [&](float p) { return uy(Y0 + (pmax.y - p) / (pmax.y - pmin.y) * (Y1 - Y0)); };
  const bool in_plot = hovered && io.MousePos.x >= pmin.x && io.MousePos.x <= pmax.x && io.MousePos.y >= pmin.y &&
                       io.MousePos.y <= pmax.y;

  // Frame, title, grid and ticks.
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 grid_col = IM_COL32(128, 128, 128, 50);
  dl->AddRectFilled(pmin, pmax, IM_COL32(20, 20, 24, 255));
  if (!options_.title.empty()) dl->AddText(ImVec2(outer_min.x + 4, outer_min.y + 3), text_col, options_.title.c_str());
  dl->PushClipRect(outer_min, outer_max, true);
  const int max_x_ticks = std::max(2, static_cast<int>((pmax.x - pmin.x) / 70));
  const int max_y_ticks = std::max(2, static_cast<int>((pmax.y - pmin.y) / 28));
  std::vector<Tick> xt, yt;
  const auto& xcat = options_.x_categories;
  if (!xcat.empty() && v.x1 - v.x0 <= 400) {
    // Category labels, thinned to every k-th when they would overlap (hover shows each one).
    float widest = 0;
    for (const auto& c : xcat) widest = std::max(widest, ImGui::CalcTextSize(c.substr(0, 14).c_str()).x + 8);
    const double spacing = (pmax.x - pmin.x) / std::max(1.0, v.x1 - v.x0);
    const int every = std::max(1, static_cast<int>(std::ceil(widest / spacing)));
    for (int i = std::max(0, static_cast<int>(std::ceil(v.x0))); i <= std::min<int>(xcat.size() - 1, std::floor(v.x1)); ++i)
      if (i % every == 0) xt.push_back({static_cast<double>(i), xcat[i]});
  } else {
    xt = log_x ? log_ticks(v.x0, v.x1, max_x_ticks) : linear_ticks(v.x0, v.x1, max_x_ticks);
  }
  const auto& ycat = options_.y_categories;
  if (!ycat.empty() && (v.y1 - v.y0) <= max_y_ticks * 1.5) {
    for (int i = std::max(0, static_cast<int>(std::ceil(v.y0))); i <= std::min<int>(ycat.size() - 1, std::floor(v.y1)); ++i)
      yt.push_back({static_cast<double>(i), ycat[i]});
  } else {
    yt = log_y ? log_ticks(v.y0, v.y1, max_y_ticks) : linear_ticks(v.y0, v.y1, max_y_ticks);
  }
  for (const auto& t : xt) {
    const float x = px(t.value);
    if (x < pmin.x - 0.5f || x > pmax.x + 0.5f) continue;
    if (!has_heat) dl->AddLine(ImVec2(x, pmin.y), ImVec2(x, pmax.y), grid_col);
    dl->AddLine(ImVec2(x, pmax.y), ImVec2(x, pmax.y + 4), text_col);
    std::string label = t.label.size() > 14 ? t.label.substr(0, 13) + "." : t.label;
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(x - ts.x / 2, pmax.y + 5), text_col, label.c_str());
  }
  for (const auto& t : yt) {
    const float y = py(t.value);
    if (y < pmin.y - 0.5f || y > pmax.y + 0.5f) continue;
    if (!has_heat) dl->AddLine(ImVec2(pmin.x, y), ImVec2(pmax.x, y), grid_col);
    dl->AddLine(ImVec2(pmin.x - 4, y), ImVec2(pmin.x, y), text_col);
    std::string label = t.label.size() > 16 ? t.label.substr(0, 15) + "." : t.label;
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(pmin.x - 6 - ts.x, y - ts.y / 2), text_col, label.c_str());
  }
  if (!options_.x_label.empty()) {
    const ImVec2 ts = ImGui::CalcTextSize(options_.x_label.c_str());
    dl->AddText(ImVec2((pmin.x + pmax.x - ts.x) / 2, outer_max.y - ts.y - 2), text_col, options_.x_label.c_str());
  }
  if (!options_.y_label.empty())  // the second header line, above the y axis
    dl->AddText(ImVec2(outer_min.x + 4, outer_min.y + 3 + line_h), IM_COL32(170, 170, 170, 255), options_.y_label.c_str());
  dl->PopClipRect();

  // Series, clipped to the plot area.
  PlotStats& stats = plot_stats();
  ++stats.plots;
  dl->PushClipRect(pmin, pmax, true);
  int bar_series = 0;
  for (const auto& s : series_) bar_series += (s.kind == Series::bars || s.kind == Series::boxes) && !v.hidden.count(s.name);
  int bar_index = 0;
  const int buckets = std::max(1, static_cast<int>(pmax.x - pmin.x));
  for (const auto& s : series_) {
    if (v.hidden.count(s.name)) continue;
    ++stats.series;
    if (s.kind == Series::heatmap) {
      const std::string key = s.key + "#" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + "#" + fmt(s.vmin) +
                              ":" + fmt(s.vmax);
      ImTextureID tex = heatmap_texture(key, s.cells, s.rows, s.cols, s.vmin, s.vmax);
      // Row r is centred on y = r (row 0 at the bottom, as the y ticks say): the texture's first row
      // (v = 0) goes to the bottom edge.
      const ImVec2 top_left(px(-0.5), py(s.rows - 0.5)), bottom_right(px(s.cols - 0.5), py(-0.5));
      dl->AddImage(tex, top_left, bottom_right, ImVec2(0, 1), ImVec2(1, 0));
      stats.cells += static_cast<long long>(s.rows) * s.cols;
      continue;
    }
    const ImU32 col = pack_rgba(s.colour);
    if (s.kind == Series::bars) {
      const double slot = 0.8 / std::max(1, bar_series);
      for (std::size_t i = 0; i < s.values.size(); ++i) {
        if (!std::isfinite(s.values[i])) continue;
        const double left = static_cast<double>(i) - 0.4 + slot * bar_index;
        const double base = log_y ? v.y0 : 0.0;
        dl->AddRectFilled(ImVec2(px(left), py(s.values[i])), ImVec2(px(left + slot * 0.92), py(base)), col);
      }
      stats.points += static_cast<long long>(s.values.size());
      ++bar_index;
      continue;
    }
    if (s.kind == Series::boxes) {
      const double slot = 0.8 / std::max(1, bar_series);
      const ImU32 fill = pack_rgba(s.colour, 0.35f), median = pack_rgba({1.0f, 1.0f, 1.0f}, 0.9f);
      for (std::size_t i = 0; i < s.box.size(); ++i) {
        const BoxStats& b = s.box[i];
        if (!std::isfinite(b.min + b.q1 + b.median + b.q3 + b.max)) continue;
        const double mid = static_cast<double>(i) - 0.4 + slot * (bar_index + 0.5);
        const float x = px(mid), l = px(mid - slot * 0.3), r = px(mid + slot * 0.3);
        const float cap_l = px(mid - slot * 0.15), cap_r = px(mid + slot * 0.15);
        dl->AddLine(ImVec2(x, py(b.min)), ImVec2(x, py(b.q1)), col, 1.5f);  // whiskers
        dl->AddLine(ImVec2(x, py(b.q3)), ImVec2(x, py(b.max)), col, 1.5f);
        dl->AddLine(ImVec2(cap_l, py(b.min)), ImVec2(cap_r, py(b.min)), col, 1.5f);
        dl->AddLine(ImVec2(cap_l, py(b.max)), ImVec2(cap_r, py(b.max)), col, 1.5f);
        // A box of zero height (all experts equally wide) still shows as a line.
        dl->AddRectFilled(ImVec2(l, py(b.q3) - 1), ImVec2(r, py(b.q1) + 1), fill);
        dl->AddRect(ImVec2(l, py(b.q3) - 1), ImVec2(r, py(b.q1) + 1), col);
        dl->AddLine(ImVec2(l, py(b.median)), ImVec2(r, py(b.median)), median, 2.0f);
      }
      stats.points += static_cast<long long>(s.box.size());
      ++bar_index;
      continue;
    }
    if (s.kind == Series::band) {
      const ImU32 fill = pack_rgba(s.colour, 0.25f);
      const std::size_t stride = std::max<std::size_t>(1, s.n / (2 * buckets));
      for (std::size_t i = 0; i + 1 < s.n; i += stride) {
        const std::size_t j = std::min(s.n - 1, i + stride);
        if (!std::isfinite(s.y[i] + s.hi[i] + s.y[j] + s.hi[j])) continue;
        const ImVec2 q[4] = {ImVec2(px(s.x[i]), py(s.hi[i])), ImVec2(px(s.x[j]), py(s.hi[j])),
                             ImVec2(px(s.x[j]), py(s.y[j])), ImVec2(px(s.x[i]), py(s.y[i]))};
        dl->AddConvexPolyFilled(q, 4, fill);
      }
      stats.points += static_cast<long long>(s.n);
      continue;
    }
    // Lines: min/max-downsampled to the pixel columns of the visible range.
    const XY& d = downsampled(s, v.x0, v.x1, buckets);
    std::vector<ImVec2> pts;
    pts.reserve(d.x.size());
    auto flush = [&]() {
      if (pts.size() >= 2) dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), col, 0, s.thickness);
      else if (pts.size() == 1) dl->AddCircleFilled(pts[0], 2.5f, col);
      pts.clear();
    };
    for (std::size_t i = 0; i < d.x.size(); ++i) {
      if ((log_x && d.x[i] <= 0) || (log_y && d.y[i] <= 0)) {
        flush();
        continue;
      }
      pts.emplace_back(px(d.x[i]), py(d.y[i]));
    }
    const std::size_t drawn = pts.size();
    flush();
    if (d.x.size() <= 40)  // short series: mark the points
      for (std::size_t i = 0; i < d.x.size(); ++i)
        if ((!log_x || d.x[i] > 0) && (!log_y || d.y[i] > 0)) dl->AddCircleFilled(ImVec2(px(d.x[i]), py(d.y[i])), 2.0f, col);
    stats.points += static_cast<long long>(d.x.size());
    (void)drawn;
  }
  dl->PopClipRect();
  dl->AddRect(pmin, pmax, IM_COL32(140, 140, 140, 255));

  // Colour bar of the (first) heat map.
  for (const auto& s : series_) {
    if (s.kind != Series::heatmap || !(s.vmax > s.vmin)) continue;
    const float cx0 = pmax.x + 10, cx1 = pmax.x + 24;
    const int steps = 64;
    for (int i = 0; i < steps; ++i) {
      const float y0 = pmax.y - (pmax.y - pmin.y) * i / steps, y1 = pmax.y - (pmax.y - pmin.y) * (i + 1) / steps;
      dl->AddRectFilled(ImVec2(cx0, y1), ImVec2(cx1, y0), pack_rgba(viridis((i + 0.5) / steps)));
    }
    dl->AddRect(ImVec2(cx0, pmin.y), ImVec2(cx1, pmax.y), IM_COL32(140, 140, 140, 255));
    for (const auto& t : linear_ticks(s.vmin, s.vmax, 5)) {
      const float y = static_cast<float>(pmax.y - (t.value - s.vmin) / (s.vmax - s.vmin) * (pmax.y - pmin.y));
      dl->AddLine(ImVec2(cx1, y), ImVec2(cx1 + 3, y), text_col);
      dl->AddText(ImVec2(cx1 + 5, y - 6), text_col, t.label.c_str());
    }
    break;
  }

  if (!legend.empty()) {
    const float lright = options_.legend_outside ? pmax.x + legend_reserve : pmax.x - 6;
    const ImVec2 lmax(lright, pmin.y + 6 + line_h * (legend.size() + (more ? 1 : 0)) + 4);
    const ImVec2 lmin(lmax.x - lw - 30, pmin.y + 6);
    dl->AddRectFilled(lmin, lmax, IM_COL32(30, 30, 36, 210));
    for (std::size_t i = 0; i < legend.size(); ++i) {
      const Series& s = *legend[i];
      const bool off = v.hidden.count(s.name) > 0;
      const float y = lmin.y + 3 + line_h * i;
      dl->AddRectFilled(ImVec2(lmin.x + 6, y + 3), ImVec2(lmin.x + 20, y + line_h - 4), pack_rgba(s.colour, off ? 0.25f : 1.0f));
      dl->AddText(ImVec2(lmin.x + 25, y), off ? IM_COL32(120, 120, 120, 255) : text_col, s.name.c_str());
      if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left) && io.MousePos.x >= lmin.x && io.MousePos.x <= lmax.x &&
          io.MousePos.y >= y && io.MousePos.y < y + line_h) {
        if (off) v.hidden.erase(s.name);
        else v.hidden.insert(s.name);
      }
    }
    if (more) dl->AddText(ImVec2(lmin.x + 25, lmax.y - line_h - 2), IM_COL32(160, 160, 160, 255), more_text.c_str());
  }

  // Interaction: pan, zoom, fit.
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
    const ImVec2 d = io.MouseDelta;
    const double dx = -d.x / (pmax.x - pmin.x) * (X1 - X0), dy = d.y / (pmax.y - pmin.y) * (Y1 - Y0);
    v.x0 = ux(X0 + dx), v.x1 = ux(X1 + dx), v.y0 = uy(Y0 + dy), v.y1 = uy(Y1 + dy);
    v.user_moved = true;
  }
  if (in_plot && io.MouseWheel != 0) {
    const double f = std::pow(0.85, io.MouseWheel);
    const double cx = tx(data_x(io.MousePos.x)), cy = ty(data_y(io.MousePos.y));
    if (!io.KeyCtrl) v.x0 = ux(cx + (X0 - cx) * f), v.x1 = ux(cx + (X1 - cx) * f);
    if (!io.KeyShift) v.y0 = uy(cy + (Y0 - cy) * f), v.y1 = uy(cy + (Y1 - cy) * f);
    v.user_moved = true;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) fit(v);
  if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Right)) ImGui::OpenPopup("plot_menu");
  if (ImGui::BeginPopup("plot_menu")) {
    if (ImGui::MenuItem("Fit to data")) fit(v);
    bool lx = log_x, ly = log_y;
    if (ImGui::MenuItem("Log x", nullptr, &lx)) v.log_x = lx, fit(v);
    if (ImGui::MenuItem("Log y", nullptr, &ly)) v.log_y = ly, fit(v);
    if (ImGui::MenuItem("Export PNG")) request_png(outer_min, outer_max, options_.title.empty() ? id_ : options_.title);
    ImGui::EndPopup();
  }

  if (export_every_plot()) request_png(outer_min, outer_max, options_.title.empty() ? id_ : options_.title);

  // Hover: crosshair and exact values.
  if (in_plot && !active) {
    const double mx = data_x(io.MousePos.x), my = data_y(io.MousePos.y);
    dl->AddLine(ImVec2(io.MousePos.x, pmin.y), ImVec2(io.MousePos.x, pmax.y), IM_COL32(200, 200, 200, 80));
    std::string tip;
    for (const auto& s : series_) {
      if (v.hidden.count(s.name)) continue;
      if (s.kind == Series::line && s.n > 0) {
        const double* it = std::lower_bound(s.x, s.x + s.n, mx);
        std::size_t i = static_cast<std::size_t>(it - s.x);
        if (i == s.n || (i > 0 && mx - s.x[i - 1] < s.x[i] - mx)) i = i == 0 ? 0 : i - 1;
        if (std::fabs(px(s.x[i]) - io.MousePos.x) > 40) continue;
        tip += s.name + ": x=" + fmt(s.x[i]) + "  y=" + fmt(s.y[i]) + "\n";
        dl->AddCircle(ImVec2(px(s.x[i]), py(s.y[i])), 4, pack_rgba(s.colour));
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
  ImGui::PopID();
}

}  // namespace moxlab::viewer
