// Observations (MoHD section 3, from `moxlab observe`): for the focused run, the cumulative magnitude
// share per tap of a layer (Fig. 3 left), per-layer sparsity of attention vs FFN inputs and outputs
// (Fig. 3 middle), activation flow over the tap sequence of a block (Fig. 4), dimensions shared by k =
// 2..20 consecutive tokens vs the top-p threshold (Fig. 3 right, blue -> red), and the clustered
// 5-token heat map of shared vs specialised dimensions (Fig. 5) with the tokens' text.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/observe/observe_capture.h"
#include "viewer/app/panel.h"
#include "viewer/app/viewer_context.h"
#include "viewer/plot/plot.h"
#include "viewer/plot/text_spans.h"

namespace moxlab::viewer {

namespace {

class ObservationsPanel : public Panel {
 public:
  std::string id() const override { return "observations"; }
  std::string title() const override { return "Observations"; }

  void draw(ViewerContext& ctx) override {
    const ObservationFile* f = focused_file(ctx, &ViewerContext::observations);
    if (!f) return;
    if (f->taps.empty()) {
      show_message(ctx, f->path + " holds no taps");
      return;
    }
    int layers = 0;
    for (const auto& t : f->taps) layers = std::max(layers, split_tap(t).first + 1);
    if (layer_ < 0) layer_ = ctx.int_arg("layer", 0);
    layer_ = std::clamp(layer_, 0, std::max(0, layers - 1));
    if (tap_.empty() && ctx.args.count("tap")) tap_ = ctx.args.at("tap");
    if (std::find(f->taps.begin(), f->taps.end(), tap_) == f->taps.end())
      tap_ = std::find(f->taps.begin(), f->taps.end(), "blocks." + std::to_string(layer_) + ".attn.in") != f->taps.end()
                 ? "blocks." + std::to_string(layer_) + ".attn.in"
                 : f->taps.front();

    ImGui::Text("Run %lld: %s", static_cast<long long>(ctx.focus), f->path.c_str());
    ImGui::SetNextItemWidth(200);
    if (layers > 1) ImGui::SliderInt("layer", &layer_, 0, layers - 1);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(260);
    if (ImGui::BeginCombo("tap (Fig. 3 right, Fig. 5)", tap_.c_str())) {
      for (const auto& t : f->taps)
        if (ImGui::Selectable(t.c_str(), t == tap_)) tap_ = t;
      ImGui::EndCombo();
    }

    const float h = std::max(220.0f, (ImGui::GetContentRegionAvail().y - 40) / 2.6f);
    if (ImGui::BeginTable("obs", 2, ImGuiTableFlags_SizingStretchSame)) {
      ImGui::TableNextColumn();
      cumulative(*f, h);
      ImGui::TableNextColumn();
      sparsity(*f, h);
      ImGui::TableNextColumn();
      flow(*f, h);
      ImGui::TableNextColumn();
      shared(*f, h);
      ImGui::EndTable();
    }
    pattern(ctx, *f, h);
  }

 private:
  int layer_ = -1;
  std::string tap_;
  std::map<std::string, std::vector<std::string>> token_text_;  // capture#row -> 5 token texts

  const TapCurves* curves(const ObservationFile& f, const std::string& tap) const {
    for (const auto& c : f.curves)
      if (c.tap == tap) return &c;
    return nullptr;
  }

  void cumulative(const ObservationFile& f, float h) {
    PlotOptions o;
    o.title = "Cumulative x^2 share per token, layer " + std::to_string(layer_) + " (Fig. 3 left)";
    o.x_label = "top dims (% of d, ranked per token)";
    o.y_label = "share of x^2";
    o.height = h;
    Plot p("##cumshare", o);
    std::vector<std::vector<double>> xs;
    xs.reserve(f.curves.size());  // the plot keeps pointers into xs until end()
    int i = 0;
    for (const auto& c : f.curves) {
      if (split_tap(c.tap).first != layer_) continue;
      std::vector<double> x(c.token_cumshare.size());
      for (std::size_t k = 0; k < x.size(); ++k) x[k] = 100.0 * (k + 1) / x.size();
      xs.push_back(std::move(x));
      p.line(split_tap(c.tap).second, xs.back(), c.token_cumshare, palette(i++));
    }
    p.end();  // before xs goes away
  }

  void sparsity(const ObservationFile& f, float h) {
    PlotOptions o;
    o.title = "Sparsity per layer, Eq. 2 (Fig. 3 middle)";
    o.x_label = "layer";
    o.y_label = "fraction of x^2 < eps";
    o.height = h;
    const std::size_t layers = f.sparsity_by_layer.empty() ? 0 : f.sparsity_by_layer.front().size();
    for (std::size_t l = 0; l < layers; ++l) o.x_categories.push_back("layer " + std::to_string(l));
    Plot p("##sparsity", o);
    for (std::size_t k = 0; k < f.sparsity_kinds.size(); ++k)
      p.bars(f.sparsity_kinds[k], f.sparsity_by_layer[k], palette(static_cast<int>(k)));
    p.end();
  }

  void flow(const ObservationFile& f, float h) {
    PlotOptions o;
    o.title = "Activation flow through block " + std::to_string(layer_) + " (Fig. 4; lines: other layers)";
    o.x_label = "tap";
    o.y_label = "median x^2, % of attn.in";
    o.x_categories = f.flow_taps;
    o.height = h;
    Plot p("##flow", o);
    std::vector<double> x(f.flow_taps.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
    if (layer_ < static_cast<int>(f.flow_median_rel.size()))
      p.bars("layer " + std::to_string(layer_), f.flow_median_rel[layer_], palette(0));
    for (std::size_t l = 0; l < f.flow_median_rel.size(); ++l)
      if (static_cast<int>(l) != layer_) p.line("layer " + std::to_string(l), x, f.flow_median_rel[l], palette(1 + static_cast<int>(l)));
    p.end();
  }

  void shared(const ObservationFile& f, float h) {
    const TapCurves* c = curves(f, tap_);
    PlotOptions o;
    o.title = "Dims high in all of k consecutive tokens, " + tap_ + " (Fig. 3 right)";
    o.x_label = "threshold: top p% of dims per token";
    o.y_label = "shared dims (k = 2 blue .. 20 red)";
    o.height = h;
    o.legend_max = 6;
    Plot p("##shared", o);
    const std::size_t np = f.shared_p.size(), nk = f.shared_k.size();
    std::vector<std::vector<double>> rows;
    if (c && !c->shared_counts.empty() && c->shared_counts.size() == nk * np && c->shared_chance.size() >= np) {
      for (std::size_t k = 0; k < nk; ++k)
        rows.emplace_back(c->shared_counts.begin() + k * np, c->shared_counts.begin() + (k + 1) * np);
      rows.emplace_back(c->shared_chance.begin(), c->shared_chance.begin() + np);
      for (std::size_t k = 0; k < nk; ++k)
        p.line("k=" + std::to_string(f.shared_k[k]), f.shared_p, rows[k], blue_to_red(nk > 1 ? double(k) / (nk - 1) : 0), 1.2f);
      p.line("chance, k=2", f.shared_p, rows.back(), {0.6f, 0.6f, 0.6f}, 1.0f);
    }
    p.end();
  }

  void pattern(ViewerContext& ctx, const ObservationFile& f, float h) {
    const TapCurves* c = curves(f, tap_);
    if (!c || c->pattern_magnitude.empty()) {
      show_message(ctx, tap_ + ": no run of 5 consecutive tokens in the capture (Fig. 5 needs one)");
      return;
    }
    const std::size_t d = c->pattern_order.size();
    // log10 x^2 in the clustered dimension order: shared dims (high in all 5) first, then by pattern.
    std::vector<float> cells(5 * d);
    float lo = 1e30f, hi = -1e30f;
    for (std::size_t t = 0; t < 5; ++t)
      for (std::size_t j = 0; j < d; ++j) {
        const float v = std::log10(c->pattern_magnitude[t * d + c->pattern_order[j]] + 1e-12f);
        cells[t * d + j] = v;
        lo = std::min(lo, v), hi = std::max(hi, v);
      }
    std::vector<std::string> tokens;
    if (!f.source.empty() && c->example_row >= 0) {
      const std::string key = f.source + "#" + std::to_string(c->example_row);
      if (!token_text_.count(key)) {
        try {
          token_text_[key] = read_token_texts(f.source, c->example_row, 5);
        } catch (const std::exception& e) {
          token_text_[key] = {};
          ctx.note(std::string("token text unavailable: ") + e.what());
        }
      }
      tokens = token_text_[key];
    }
    // Share of each token's high dims that are high for it alone (specialised), from the 5-bit patterns.
    std::vector<TextSpan> spans;
    PlotOptions o;
    for (int t = 0; t < 5; ++t) {
      int high = 0, alone = 0;
      for (std::int32_t bits : c->pattern_bits) high += (bits >> t) & 1, alone += bits == (1 << t);
      const double share = high ? double(alone) / high : 0;
      const std::string text = t < static_cast<int>(tokens.size()) ? tokens[t] : "token " + std::to_string(t);
      char tip[160];
      std::snprintf(tip, sizeof tip, "token %d: %d high dims, %d of them high for this token only (%.0f%%)", t, high, alone, 100 * share);
      spans.push_back({text, blue_to_red(share * 2), 0.85f, tip});
      o.y_categories.push_back("'" + text + "'");
    }
    ImGui::TextUnformatted("Example run of 5 tokens (colour: share of the token's high dims specific to it, blue 0% -> red 50%+):");
    text_spans(spans);
    o.title = "log10 x^2 of the 5 tokens, dims in clustered order (Fig. 5), " + tap_;
    o.x_label = "dimension (clustered: shared first)";
    o.height = std::max(160.0f, h * 0.7f);
    Plot p("##pattern5", o);
    p.heatmap("x2", cells.data(), 5, static_cast<int>(d), lo, hi, f.path + "#pattern5#" + tap_);
    p.end();
  }
};

}  // namespace

MOXLAB_VIEWER_PANEL(ObservationsPanel, 30)

}  // namespace moxlab::viewer
