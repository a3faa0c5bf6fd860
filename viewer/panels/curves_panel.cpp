// Curves: a metric over steps for the selected runs, overlaid; EMA smoothing, log axes, and grouping
// by a config key (run.variant, model.dim, ...) into mean +- standard error bands over each group's
// runs (its seeds). Reads the store's metrics table; curves refresh while runs write.
#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "viewer/app/panel.h"
#include "viewer/app/viewer_context.h"
#include "viewer/model/curve_stats.h"
#include "viewer/plot/plot.h"

namespace moxlab::viewer {

namespace {

struct Curve {
  std::string name;
  std::vector<double> x, y, lo, hi;
};

class CurvesPanel : public Panel {
 public:
  std::string id() const override { return "curves"; }
  std::string title() const override { return "Curves"; }

  void draw(ViewerContext& ctx) override {
    std::vector<const RunRow*> runs;
    for (auto id : ctx.selected)
      if (const RunRow* r = ctx.catalog.find(id)) runs.push_back(r);
    if (runs.empty()) {
      show_message(ctx, "No runs selected: tick runs in the Runs panel (or pass --run ID).");
      return;
    }
    // Metric keys any selected run has.
    std::set<std::string> keys;
    for (const auto* r : runs)
      for (const auto& k : ctx.metric_keys(r->run.id)) keys.insert(k);
    if (keys.empty()) {
      show_message(ctx, "The selected runs have logged no metrics yet.");
      return;
    }
    if (metric_.empty()) metric_ = ctx.args.count("metric") ? ctx.args.at("metric") : "val/ppl";
    if (!keys.count(metric_)) metric_ = keys.count("val/ppl") ? "val/ppl" : *keys.begin();
    if (group_.empty() && ctx.args.count("group")) group_ = ctx.args.at("group");

    ImGui::SetNextItemWidth(260);
    if (ImGui::BeginCombo("metric", metric_.c_str())) {
      for (const auto& k : keys)
        if (ImGui::Selectable(k.c_str(), k == metric_)) metric_ = k;
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(140);
    ImGui::SliderFloat("smoothing", &smoothing_, 0.0f, 0.99f, "%.2f", ImGuiSliderFlags_AlwaysClamp);
    ImGui::SameLine();
    ImGui::Checkbox("log x", &log_x_);
    ImGui::SameLine();
    ImGui::Checkbox("log y", &log_y_);
    ImGui::SameLine();
    const auto varying = RunCatalog::varying_config_keys(runs);
    ImGui::SetNextItemWidth(220);
    if (ImGui::BeginCombo("group by", group_.empty() ? "(each run)" : group_.c_str())) {
      if (ImGui::Selectable("(each run)", group_.empty())) group_.clear();
      for (const auto& k : varying)
        if (ImGui::Selectable(k.c_str(), k == group_)) group_ = k;
      ImGui::EndCombo();
    }

    const auto curves = group_.empty() ? per_run(ctx, runs) : per_group(ctx, runs);
    PlotOptions opt;
    opt.title = metric_ + (group_.empty() ? "" : "  (mean +- stderr over runs, grouped by " + group_ + ")");
    opt.x_label = "step";
    opt.y_label = metric_;
    opt.log_x = log_x_;
    opt.log_y = log_y_;
    opt.height = std::max(260.0f, ImGui::GetContentRegionAvail().y - 8);
    Plot plot(("##curves_" + metric_ + (log_x_ ? "_lx" : "") + (log_y_ ? "_ly" : "")).c_str(), opt);
    for (std::size_t i = 0; i < curves.size(); ++i) {
      const Curve& c = curves[i];
      if (!c.lo.empty()) plot.band(c.name, c.x.data(), c.lo.data(), c.hi.data(), c.x.size(), palette(static_cast<int>(i)));
      plot.line(c.name, c.x, c.y, palette(static_cast<int>(i)));
    }
    plot.end();
  }

 private:
  std::string metric_, group_;
  float smoothing_ = 0.0f;
  bool log_x_ = false, log_y_ = false;

  static std::vector<double> values(const std::vector<MetricPoint>& pts) {
    std::vector<double> v;
    for (const auto& p : pts) v.push_back(p.value);
    return v;
  }

  std::vector<Curve> per_run(ViewerContext& ctx, const std::vector<const RunRow*>& runs) const {
    std::vector<Curve> out;
    for (const auto* r : runs) {
      const auto& pts = ctx.metric(r->run.id, metric_);
      if (pts.empty()) continue;
      Curve c;
      c.name = "#" + std::to_string(r->run.id) + (r->variant.empty() ? " " + r->run.name : " " + r->variant) + " s" +
               std::to_string(r->run.seed);
      for (const auto& p : pts) c.x.push_back(static_cast<double>(p.step));
      c.y = ema_smooth(values(pts), smoothing_);
      out.push_back(std::move(c));
    }
    return out;
  }

  std::vector<Curve> per_group(ViewerContext& ctx, const std::vector<const RunRow*>& runs) const {
    std::map<std::string, std::vector<std::vector<MetricPoint>>> groups;
    for (const auto* r : runs) {
      auto it = r->config.find(group_);
      const std::string key = group_ + "=" + (it == r->config.end() ? std::string("-") : config_value_text(*it));
      auto pts = ctx.metric(r->run.id, metric_);
      if (pts.empty()) continue;
      // Smooth each run before averaging, so the band reflects the seeds' spread of the smoothed curve.
      const auto smooth = ema_smooth(values(pts), smoothing_);
      for (std::size_t i = 0; i < pts.size(); ++i) pts[i].value = smooth[i];
      groups[key].push_back(std::move(pts));
    }
    std::vector<Curve> out;
    for (const auto& [key, curves] : groups) {
      const CurveBand band = mean_band(curves);
      Curve c;
      c.name = key + " (n=" + std::to_string(curves.size()) + ")";
      c.x = band.step;
      c.y = band.mean;
      for (std::size_t i = 0; i < band.mean.size(); ++i) {
        c.lo.push_back(band.mean[i] - band.std_err[i]);
        c.hi.push_back(band.mean[i] + band.std_err[i]);
      }
      out.push_back(std::move(c));
    }
    return out;
  }
};

}  // namespace

MOXLAB_VIEWER_PANEL(CurvesPanel, 20)

}  // namespace moxlab::viewer
