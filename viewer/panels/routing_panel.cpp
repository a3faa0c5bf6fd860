// Routing (MoHD Fig. 11, MoH Fig. 3, ToMoE expert load; from `moxlab route`): for the focused run and a chosen
// layer, how often each sub-dimension of the attention and FFN routers (MoHD), each head (MoH) or each MLP
// expert (ToMoE) is selected (or its mean router score) per data
// domain, as grouped bars (Fig. 11's form) or a domain x sub-dimension heat map, with each router's
// spread across domains and least-used sub-dimension.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "core/model/model_kind.h"
#include "viewer/app/panel.h"
#include "viewer/app/viewer_context.h"
#include "viewer/plot/plot.h"

namespace moxlab::viewer {

namespace {

class RoutingPanel : public Panel {
 public:
  std::string id() const override { return "routing"; }
  std::string title() const override { return "Routing"; }

  void draw(ViewerContext& ctx) override {
    const RoutingFile* f = focused_file(ctx, &ViewerContext::routing);
    if (!f) return;
    int layers = 0;
    for (const auto& r : f->routers) layers = std::max(layers, r.layer + 1);
    if (layer_ < 0) {  // first frame: headless options
      layer_ = ctx.int_arg("layer", 0);
      heatmap_ = ctx.args.count("view") && ctx.args.at("view") == "heatmap";
      value_ = ctx.args.count("value") && ctx.args.at("value") == "score" ? 1 : 0;
    }
    layer_ = std::clamp(layer_, 0, std::max(0, layers - 1));

    ImGui::Text("Run %lld: %s  (%zu domains)", static_cast<long long>(ctx.focus), f->path.c_str(), f->domains.size());
    ImGui::SetNextItemWidth(200);
    if (layers > 1) ImGui::SliderInt("layer", &layer_, 0, layers - 1);
    ImGui::SameLine();
    ImGui::RadioButton("selection fraction", &value_, 0);
    ImGui::SameLine();
    ImGui::RadioButton("mean router score", &value_, 1);
    ImGui::SameLine();
    ImGui::Checkbox("heat map", &heatmap_);

    const float h = std::max(220.0f, (ImGui::GetContentRegionAvail().y - 10) / 2 - 30);
    // What each part's router picks (model_kind.h): MoH heads, ToMoE MLP experts, MoHD hidden sub-dimensions.
    const RunRow* run = ctx.catalog.find(ctx.focus);
    const auto routes = [&](const char* key, bool attention) -> std::string {
      const ModelKind* k = find_model_kind(run ? run->config.value(key, "dense") : "dense");
      return !k ? "" : attention ? k->attention_routes : k->ffn_routes;
    };
    const std::string attn_routes = routes("model.attention", true), ffn_routes = routes("model.ffn", false);
    for (const auto& r : f->routers) {
      if (r.layer != layer_) continue;
      const std::string& what = r.part == "attn" ? attn_routes : ffn_routes;
      const Unit unit = what == "heads" ? Unit::head : what == "experts" ? Unit::expert : Unit::sub_dim;
      router_plot(*f, r, h, unit);
    }
  }

 private:
  int layer_ = -1, value_ = 0;
  bool heatmap_ = false;
  enum class Unit { sub_dim, head, expert };

  void router_plot(const RoutingFile& f, const RouterTable& r, float h, Unit unit) {
    const std::vector<double>& v = value_ == 0 ? r.selected : r.score;
    const std::size_t d = f.domains.size(), n = static_cast<std::size_t>(r.sub_dims);
    char null[96] = "";
    if (r.null.permutations > 0)
      std::snprintf(null, sizeof null, "; chance: 95%% of permuted spreads <= %.2f, p %.3f", r.null.q95, r.null.p);
    char title[320];
    std::snprintf(title, sizeof title, "%s router: %s per domain (spread %.2f%s, least-used %.2f)", r.router.c_str(),
                  value_ == 0 ? "selection fraction" : "mean score", r.spread(), null, r.least_used());
    PlotOptions o;
    o.title = title;
    o.height = h;
    const char* prefix = unit == Unit::head ? "head " : unit == Unit::expert ? "expert " : "sub ";
    for (std::size_t i = 0; i < n; ++i) o.x_categories.push_back(prefix + std::to_string(i));
    o.x_label = unit == Unit::head     ? "attention head (MoH head load, Fig. 3)"
                : unit == Unit::expert ? "MLP expert (ToMoE top-1 routing)"
                                       : "sub-dimension (MoHD Fig. 11)";
    if (heatmap_) {
      o.y_categories = f.domains;
      std::vector<float> cells(v.begin(), v.end());
      const double vmax = value_ == 0 || v.empty() ? 1.0 : std::max(1e-9, *std::max_element(v.begin(), v.end()));
      Plot p(("##routing_heat_" + r.router).c_str(), o);
      p.heatmap(r.router, cells.data(), static_cast<int>(d), static_cast<int>(n), 0.0, vmax,
                f.path + "#" + r.router + "#" + std::to_string(value_));
      p.end();
      return;
    }
    o.y_label = value_ == 0 ? "fraction of tokens" : "mean s_i";
    o.legend_max = 10;
    o.legend_outside = true;  // grouped bars fill the plot up to 1.0: an inside legend would cover the last heads
    Plot p(("##routing_bars_" + r.router).c_str(), o);
    for (std::size_t k = 0; k < d; ++k)
      p.bars(f.domains[k], std::vector<double>(v.begin() + k * n, v.begin() + (k + 1) * n), palette(static_cast<int>(k)));
    p.end();
  }
};

}  // namespace

MOXLAB_VIEWER_PANEL(RoutingPanel, 40)

}  // namespace moxlab::viewer
