// Runs: every run of the store with its status, sweep, the config keys that differ between the shown
// runs and chosen result columns. Filter line (run_filter.h), sortable columns, checkboxes select runs
// for Curves and the comparison below, a click focuses a run (Observations, Routing), tags are edited
// in place. The catalog refreshes itself while runs write.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "viewer/app/panel.h"
#include "viewer/app/viewer_context.h"
#include "viewer/model/run_filter.h"
#include "viewer/plot/plot.h"

namespace moxlab::viewer {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 1e5 && std::floor(v) == v ? "%.0f" : "%.5g", v);
  return buf;
}

// By the shown status (RunRow::status): a killed or stale run looks like what it is, not running.
ImU32 status_colour(const std::string& s) {
  if (s == "finished") return IM_COL32(120, 200, 120, 255);
  if (s == "running") return IM_COL32(120, 170, 255, 255);
  if (s == "failed") return IM_COL32(255, 110, 90, 255);
  if (s == "killed" || s == "stale") return IM_COL32(230, 170, 80, 255);
  return IM_COL32(180, 180, 180, 255);
}

class RunsPanel : public Panel {
 public:
  std::string id() const override { return "runs"; }
  std::string title() const override { return "Runs"; }

  void draw(ViewerContext& ctx) override {
    if (!ctx.catalog.error().empty()) {
      show_message(ctx, "Cannot read the run store: " + ctx.catalog.error());
      if (ImGui::Button("Retry")) ctx.catalog.refresh(true);
      return;
    }
    ImGui::SetNextItemWidth(420);
    ImGui::InputTextWithHint("##filter", "filter: words, or model.dim>=384 status=finished ppl/val/all<300 or tag=best",
                             &filter_text_);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(320);
    ImGui::InputTextWithHint("##results", "result columns, comma-separated", &result_columns_);
    ImGui::SameLine();
    if (ImGui::Button("Reload")) ctx.catalog.refresh(true), ++ctx.generation;

    RunFilterExpr filter;
    try {
      filter = RunFilterExpr::parse(filter_text_);
    } catch (const std::exception& e) {
      show_message(ctx, e.what());
    }
    std::vector<const RunRow*> shown;
    for (const auto& row : ctx.catalog.runs())
      if (filter.matches(row.text, [&](const std::string& f) { return RunCatalog::field(row, f); })) shown.push_back(&row);

    ImGui::Text("%zu of %zu runs", shown.size(), ctx.catalog.runs().size());
    ImGui::SameLine();
    if (ImGui::SmallButton("select shown")) for (const auto* r : shown) ctx.selected.insert(r->run.id);
    ImGui::SameLine();
    if (ImGui::SmallButton("clear selection")) ctx.selected.clear();

    draw_sweeps(ctx);
    const auto config_keys = limited(RunCatalog::varying_config_keys(shown), 10);
    const auto results = split_list(result_columns_);
    draw_table(ctx, shown, config_keys, results);
    draw_focus(ctx);
    draw_compare(ctx, results);
  }

 private:
  std::string filter_text_;
  std::string result_columns_ = "params/active, ppl/val/all, ppl/wikitext2";
  std::string tags_text_;
  std::int64_t tags_run_ = 0;

  static std::vector<std::string> limited(std::vector<std::string> keys, std::size_t n) {
    if (keys.size() > n) keys.resize(n);
    return keys;
  }

  // Column c of a run as text and, when numeric, as a number (for sorting).
  static std::string cell(const RunRow& r, int c, const std::vector<std::string>& config_keys,
                          const std::vector<std::string>& results) {
    static const char* fixed[] = {"", "id", "name", "status", "sweep", "seed", "tags"};
    if (c < 7) return c == 0 ? "" : RunCatalog::field(r, fixed[c]).value_or("");
    c -= 7;
    if (c < static_cast<int>(results.size())) {
      auto it = r.results.find(results[c]);
      return it == r.results.end() ? "" : number_text(it->second);
    }
    c -= static_cast<int>(results.size());
    auto it = r.config.find(config_keys[c]);
    return it == r.config.end() ? "" : config_value_text(*it);
  }

  void draw_table(ViewerContext& ctx, std::vector<const RunRow*>& shown, const std::vector<std::string>& config_keys,
                  const std::vector<std::string>& results) {
    const int columns = 7 + static_cast<int>(config_keys.size() + results.size());
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                  ImGuiTableFlags_SizingFixedFit;
    const float height = std::max(160.0f, ImGui::GetContentRegionAvail().y * 0.6f);
    if (columns > 64 || !ImGui::BeginTable("runs", columns, flags, ImVec2(0, height))) return;
    ImGui::TableSetupScrollFreeze(2, 1);
    ImGui::TableSetupColumn("sel", ImGuiTableColumnFlags_NoSort);
    ImGui::TableSetupColumn("id", ImGuiTableColumnFlags_DefaultSort);
    for (const char* name : {"name", "status", "sweep", "seed", "tags"}) ImGui::TableSetupColumn(name);
    for (const auto& k : results) ImGui::TableSetupColumn(k.c_str());
    for (const auto& k : config_keys) ImGui::TableSetupColumn(k.c_str());
    ImGui::TableHeadersRow();

    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsCount > 0) {
      const int col = specs->Specs[0].ColumnIndex;
      const bool asc = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
      std::stable_sort(shown.begin(), shown.end(), [&](const RunRow* a, const RunRow* b) {
        const std::string x = cell(*a, col, config_keys, results), y = cell(*b, col, config_keys, results);
        char* ex = nullptr;
        char* ey = nullptr;
        const double nx = std::strtod(x.c_str(), &ex), ny = std::strtod(y.c_str(), &ey);
        const bool numeric = !x.empty() && !y.empty() && *ex == 0 && *ey == 0;
        if (numeric && (std::isnan(nx) || std::isnan(ny))) {  // NaN last in either direction
          if (std::isnan(nx) != std::isnan(ny)) return std::isnan(ny);
          return false;
        }
        const bool less = numeric ? nx < ny : x < y;
        const bool more = numeric ? nx > ny : x > y;
        return asc ? less : more;
      });
    }
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(shown.size()));
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const RunRow& r = *shown[i];
        ImGui::TableNextRow();
        ++plot_stats().rows;
        ImGui::PushID(static_cast<int>(r.run.id));
        ImGui::TableSetColumnIndex(0);
        bool sel = ctx.selected.count(r.run.id) > 0;
        if (ImGui::Checkbox("##sel", &sel)) {
          if (sel) ctx.selected.insert(r.run.id);
          else ctx.selected.erase(r.run.id);
        }
        for (int c = 1; c < columns; ++c) {
          ImGui::TableSetColumnIndex(c);
          const std::string text = cell(r, c, config_keys, results);
          if (c == 1) {
            if (ImGui::Selectable(text.c_str(), ctx.focus == r.run.id, ImGuiSelectableFlags_SpanAllColumns))
              ctx.focus = r.run.id;
            if (!r.run.error.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.run.error.c_str());
          } else if (c == 3) {
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(status_colour(r.status)), "%s", text.c_str());
          } else {
            ImGui::TextUnformatted(text.c_str());
          }
        }
        ImGui::PopID();
      }
    }
    ImGui::EndTable();
  }

  // Sweeps with their runs' status counts; a click filters the table to the sweep.
  void draw_sweeps(ViewerContext& ctx) {
    const auto& sweeps = ctx.catalog.sweeps();
    if (sweeps.empty() || !ImGui::CollapsingHeader(("Sweeps (" + std::to_string(sweeps.size()) + ")").c_str())) return;
    if (!ImGui::BeginTable("sweeps", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) return;
    for (const char* h : {"id", "name", "finished", "running", "failed/killed", "pending"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const auto& sw : sweeps) {
      int counts[4] = {0, 0, 0, 0};
      for (const auto& r : ctx.catalog.runs()) {
        if (r.run.sweep_id != sw.id) continue;
        const std::string& st = r.status;
        ++counts[st == "finished" ? 0 : st == "running" ? 1 : st == "pending" ? 3 : 2];
      }
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::Text("%lld", static_cast<long long>(sw.id));
      ImGui::TableSetColumnIndex(1);
      if (ImGui::Selectable(sw.name.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) filter_text_ = "sweep=\"" + sw.name + "\"";
      for (int c = 0; c < 4; ++c) {
        ImGui::TableSetColumnIndex(2 + c);
        ImGui::Text("%d", counts[c]);
      }
    }
    ImGui::EndTable();
  }

  void draw_focus(ViewerContext& ctx) {
    const RunRow* r = ctx.focus ? ctx.catalog.find(ctx.focus) : nullptr;
    if (!r) {
      ImGui::TextDisabled("Click a run's id to focus it (Observations and Routing show the focused run).");
      return;
    }
    if (tags_run_ != r->run.id) tags_text_ = join(r->run.tags), tags_run_ = r->run.id;
    ImGui::Text("Run %lld: %s  [%s]  %zu results", static_cast<long long>(r->run.id), r->run.name.c_str(),
                r->status.c_str(), r->results.size());
    if (!r->run.error.empty()) show_message(ctx, "error: " + r->run.error);
    ImGui::SetNextItemWidth(300);
    ImGui::InputTextWithHint("##tags", "tags, comma-separated", &tags_text_);
    ImGui::SameLine();
    if (ImGui::Button("Save tags")) {
      try {
        ctx.catalog.set_tags(r->run.id, split_list(tags_text_));
        ++ctx.generation;
      } catch (const std::exception& e) {
        ctx.last_export = std::string("tags not saved: ") + e.what();
      }
    }
  }

  // Selected runs side by side: the config keys that differ and the chosen results.
  void draw_compare(ViewerContext& ctx, const std::vector<std::string>& results) {
    std::vector<const RunRow*> rows;
    for (auto id : ctx.selected)
      if (const RunRow* r = ctx.catalog.find(id)) rows.push_back(r);
    if (rows.size() < 2) return;
    if (!ImGui::CollapsingHeader("Compare selected runs", ImGuiTreeNodeFlags_DefaultOpen)) return;
    auto keys = RunCatalog::varying_config_keys(rows);
    const int columns = 1 + static_cast<int>(std::min<std::size_t>(rows.size(), 60));
    if (!ImGui::BeginTable("compare", columns, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollX |
                                                   ImGuiTableFlags_SizingFixedFit))
      return;
    ImGui::TableSetupColumn("key");
    for (int c = 1; c < columns; ++c) ImGui::TableSetupColumn(("run " + std::to_string(rows[c - 1]->run.id)).c_str());
    ImGui::TableHeadersRow();
    auto row_of = [&](const std::string& key, bool result) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(key.c_str());
      for (int c = 1; c < columns; ++c) {
        ImGui::TableSetColumnIndex(c);
        const RunRow& r = *rows[c - 1];
        std::string text;
        if (result) {
          auto it = r.results.find(key);
          if (it != r.results.end()) text = number_text(it->second);
        } else {
          auto it = r.config.find(key);
          if (it != r.config.end()) text = config_value_text(*it);
        }
        ImGui::TextUnformatted(text.empty() ? "-" : text.c_str());
      }
    };
    for (const auto& k : keys) row_of(k, false);
    for (const auto& k : results) row_of(k, true);
    ImGui::EndTable();
  }
};

}  // namespace

MOXLAB_VIEWER_PANEL(RunsPanel, 10)

}  // namespace moxlab::viewer
