// ToMoE ("Converting Dense LLMs to MoE through Dynamic Structural Pruning"; `moxlab convert tomoe`): for
// the focused run, what the conversion kept per layer and operation (Fig. 4/7), how much of the MLP and
// v/o dims the experts / tokens cover together (Fig. 5a), the spread of expert widths per layer as box
// plots (Fig. 8), the experts' pairwise Jaccard similarity at a chosen layer (Fig. 9), and captured text
// coloured by the expert each token was routed to at that layer (Tables 4, 8, 9).
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "viewer/app/panel.h"
#include "viewer/app/viewer_context.h"
#include "viewer/model/tomoe_view.h"
#include "viewer/plot/plot.h"
#include "viewer/plot/text_spans.h"

namespace moxlab::viewer {

namespace {

// Tokens of text shown per domain: about a paragraph, like the paper's tables.
constexpr std::int64_t kShownTokens = 200;

class TomoePanel : public Panel {
 public:
  std::string id() const override { return "tomoe"; }
  std::string title() const override { return "ToMoE"; }

  void draw(ViewerContext& ctx) override {
    const TomoeConversionRecord* r = focused_file(ctx, &ViewerContext::tomoe_conversion);
    if (!r) return;
    if (layer_ < 0) {  // first frame: headless options
      layer_ = ctx.int_arg("layer", 0);
      if (ctx.args.count("domain")) domain_ = ctx.args.at("domain");
    }
    layer_ = std::clamp(layer_, 0, r->layers() - 1);
    const std::string path = ctx.artifact(ctx.focus, "tomoe_conversion");

    ImGui::Text("Run %lld: target active p = %.3g, measured active ratio %.4f, conversion '%s'   (%d layers, %d "
                "experts, head_dim %d, d_mid %d)",
                static_cast<long long>(ctx.focus), r->target_active, r->active_ratio, r->conversion_rule.c_str(),
                r->layers(), r->experts, r->head_dim, r->d_mid);
    ImGui::SetNextItemWidth(200);
    if (r->layers() > 1) ImGui::SliderInt("layer (similarity, routed text)", &layer_, 0, r->layers() - 1);

    const float h = std::max(190.0f, (ImGui::GetContentRegionAvail().y - 210) / 2);
    std::vector<std::string> layers;
    for (int l = 0; l < r->layers(); ++l) layers.push_back("layer " + std::to_string(l));
    if (ImGui::BeginTable("tomoe", 2, ImGuiTableFlags_SizingStretchSame)) {
      ImGui::TableNextColumn();
      kept_widths(*r, layers, h);
      ImGui::TableNextColumn();
      union_coverage(*r, layers, h);
      ImGui::TableNextColumn();
      expert_widths(*r, layers, h);
      ImGui::TableNextColumn();
      similarity(*r, path, h);
      ImGui::EndTable();
    }
    routed_text(ctx);
  }

 private:
  int layer_ = -1;
  std::string domain_;
  template <class T>
  struct Cached {
    std::unique_ptr<T> value;
    std::string error;
  };
  std::map<std::string, Cached<RoutedCapture>> captures_;                  // capture path
  std::map<std::string, Cached<std::vector<RoutedToken>>> tokens_;         // path#layer#domain

  void kept_widths(const TomoeConversionRecord& r, const std::vector<std::string>& layers, float h) {
    const KeptWidths k = kept_width_fractions(r);
    PlotOptions o;
    o.title = "Kept width per layer and operation (Fig. 4/7)";
    o.y_label = "kept fraction (of head_dim; MLP: of d_mid)";
    o.x_categories = layers;
    o.height = h;
    o.legend_outside = true;  // bars reach 1.0: an inside legend would cover the last layer's
    Plot p("##tomoe_kept", o);
    p.bars("q/k (static)", k.qk, palette(0));
    p.bars("v/o (top-K)", k.vo, palette(1));
    p.bars("MLP (widest expert)", k.mlp, palette(2));
    p.end();
  }

  void union_coverage(const TomoeConversionRecord& r, const std::vector<std::string>& layers, float h) {
    PlotOptions o;
    o.title = "Union coverage per layer (Fig. 5a)";
    o.y_label = "share kept by at least one expert / token";
    o.x_categories = layers;
    o.height = h;
    o.legend_outside = true;
    Plot p("##tomoe_union", o);
    p.bars("MLP: union of experts", r.mlp_union, palette(2));
    p.bars("v/o: union of tokens", r.vo_union, palette(1));
    p.end();
  }

  void expert_widths(const TomoeConversionRecord& r, const std::vector<std::string>& layers, float h) {
    PlotOptions o;
    o.title = "Expert widths per layer: min, quartiles, median, max (Fig. 8)";
    o.y_label = "kept SwiGLU channels per expert (d_mid = " + std::to_string(r.d_mid) + ")";
    o.x_categories = layers;
    o.y_from_zero = true;
    o.height = h;
    o.legend_outside = true;  // equally wide experts reach the top: an inside legend would cover them
    Plot p("##tomoe_widths", o);
    p.boxes(std::to_string(r.experts) + " experts", expert_width_boxes(r), palette(2));
    p.end();
  }

  void similarity(const TomoeConversionRecord& r, const std::string& path, float h) {
    const int n = r.experts;
    const auto& jaccard = r.expert_jaccard[layer_];
    std::vector<float> cells(jaccard.begin(), jaccard.end());
    char title[160];
    std::snprintf(title, sizeof title, "Expert similarity, layer %d: Jaccard of channel masks (Fig. 9; mean pair %.3f)",
                  layer_, r.expert_similarity[layer_]);
    PlotOptions o;
    o.title = title;
    for (int e = 0; e < n; ++e) o.x_categories.push_back("expert " + std::to_string(e));
    o.y_categories = o.x_categories;
    o.height = h;
    Plot p("##tomoe_jaccard", o);
    p.heatmap("Jaccard", cells.data(), n, n, 0.0, 1.0, path + "#jaccard#" + std::to_string(layer_));
    p.end();
  }

  // Tables 4, 8, 9: a domain's captured text, each token on the colour of its routed expert at layer_.
  void routed_text(ViewerContext& ctx) {
    const std::string run = std::to_string(ctx.focus);
    if (ctx.artifact(ctx.focus, "routing").empty()) {
      show_message(ctx, "run " + run + " has no routing capture: `moxlab route --run " + run +
                            "` captures its router taps (needed for the text coloured by routed expert)");
      return;
    }
    std::string why;
    const RoutingFile* f = ctx.routing(ctx.focus, &why);
    if (!f) {
      show_message(ctx, why);
      return;
    }
    if (f->source.empty()) {
      show_message(ctx, f->path + " does not name its capture (attribute 'source'): run `moxlab route --run " + run + "` again");
      return;
    }
    auto& entry = captures_[f->source];
    if (!entry.value && entry.error.empty()) {
      try {
        entry.value = std::make_unique<RoutedCapture>(read_routed_capture(f->source));
      } catch (const std::exception& e) {
        entry.error = e.what();
      }
    }
    if (!entry.value) {
      show_message(ctx, "cannot read the routing capture of run " + run + ": " + entry.error);
      return;
    }
    const RoutedCapture& c = *entry.value;
    if (std::find(c.domains.begin(), c.domains.end(), domain_) == c.domains.end()) domain_ = c.domains.front();
    ImGui::SetNextItemWidth(200);
    if (ImGui::BeginCombo("domain", domain_.c_str())) {
      for (const auto& d : c.domains)
        if (ImGui::Selectable(d.c_str(), d == domain_)) domain_ = d;
      ImGui::EndCombo();
    }
    if (std::find(c.layers.begin(), c.layers.end(), layer_) == c.layers.end()) {
      show_message(ctx, "layer " + std::to_string(layer_) + " has no FFN expert router in " + c.path + " (a dense FFN)");
      return;
    }
    const std::size_t d = std::find(c.domains.begin(), c.domains.end(), domain_) - c.domains.begin();
    const std::string key = c.path + "#" + std::to_string(layer_) + "#" + domain_;
    auto& tokens = tokens_[key];
    if (!tokens.value && tokens.error.empty()) {
      try {
        tokens.value = std::make_unique<std::vector<RoutedToken>>(
            routed_tokens(c, layer_, c.begin[d], std::min(c.count[d], kShownTokens)));
      } catch (const std::exception& e) {
        tokens.error = e.what();
      }
    }
    if (!tokens.value) {
      show_message(ctx, "cannot read routed tokens: " + tokens.error);
      return;
    }
    ImGui::SameLine();
    ImGui::Text("  first %zu tokens of '%s', coloured by routed expert at layer %d (Tables 4, 8, 9; hover: expert, router p)",
                tokens.value->size(), domain_.c_str(), layer_);
    text_spans(expert_legend(*tokens.value, c.experts));
    ImGui::Separator();
    text_spans(routed_spans(*tokens.value));
  }
};

}  // namespace

MOXLAB_VIEWER_PANEL(TomoePanel, 45)

}  // namespace moxlab::viewer
