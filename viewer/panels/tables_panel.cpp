// Tables: any `moxlab table` spec (experiments/tables/*.toml, or a path typed in) built from the store
// with the same code as the CLI (experiments/report), optionally for another sweep, shown as a table
// with the best cells highlighted, definitions, provenance and warnings, and copied to the clipboard
// as Markdown, CSV or LaTeX. Rebuilt when the store changes. Opened with a run in focus (--run), it shows
// that run's sweep.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "core/store/run_store.h"
#include "experiments/report/table_build.h"
#include "experiments/report/table_format.h"
#include "experiments/report/table_spec.h"
#include "viewer/app/panel.h"
#include "viewer/app/viewer_context.h"
#include "viewer/plot/plot.h"

namespace moxlab::viewer {

namespace {

class TablesPanel : public Panel {
 public:
  std::string id() const override { return "tables"; }
  std::string title() const override { return "Tables"; }

  void draw(ViewerContext& ctx) override {
    if (specs_.empty()) list_specs(ctx);
    if (!started_) start(ctx);

    ImGui::SetNextItemWidth(420);
    if (ImGui::BeginCombo("spec", spec_path_.empty() ? "(choose a table spec)" : spec_path_.c_str())) {
      for (const auto& s : specs_)
        if (ImGui::Selectable(s.c_str(), s == spec_path_)) spec_path_ = s, built_generation_ = -1;
      ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(200);
    if (ImGui::BeginCombo("sweep", sweep_.empty() ? "(as in the spec)" : sweep_.c_str())) {
      if (ImGui::Selectable("(as in the spec)", sweep_.empty())) sweep_.clear(), built_generation_ = -1;
      for (const auto& s : ctx.catalog.sweeps()) {
        const std::string label = s.name + " (#" + std::to_string(s.id) + ")";
        if (ImGui::Selectable(label.c_str(), sweep_ == std::to_string(s.id))) sweep_ = std::to_string(s.id), built_generation_ = -1;
      }
      ImGui::EndCombo();
    }
    ImGui::SetNextItemWidth(420);
    if (ImGui::InputTextWithHint("##path", "or a spec path, Enter to load", &typed_, ImGuiInputTextFlags_EnterReturnsTrue))
      spec_path_ = typed_, built_generation_ = -1;
    if (!focus_note_.empty()) show_message(ctx, focus_note_);
    if (spec_path_.empty()) {
      show_message(ctx, "Choose a table spec (" + std::to_string(specs_.size()) + " found in " + ctx.tables_dir + ").");
      return;
    }
    if (built_generation_ != ctx.generation) build(ctx);
    if (!error_.empty()) {
      show_message(ctx, error_);
      return;
    }
    if (ImGui::Button("Copy Markdown")) ImGui::SetClipboardText(format_markdown(*table_).c_str());
    ImGui::SameLine();
    if (ImGui::Button("Copy CSV")) ImGui::SetClipboardText(format_csv(*table_).c_str());
    ImGui::SameLine();
    if (ImGui::Button("Copy LaTeX")) ImGui::SetClipboardText(format_latex(*table_).c_str());
    render(ctx, *table_);
  }

 private:
  std::vector<std::string> specs_;
  std::string spec_path_, sweep_, typed_, error_;
  std::optional<Table> table_;
  int built_generation_ = -1;
  bool started_ = false;
  std::string focus_note_;  // what the run in focus (--run) made the panel show, or what it needs

  // The first frame: --arg table= / sweep= as given; a run in focus (--run) picks its sweep, and when no
  // table is given, a spec that selects that sweep (else the generic sweep summary).
  void start(ViewerContext& ctx) {
    started_ = true;
    if (ctx.args.count("table")) spec_path_ = resolve(ctx, ctx.args.at("table"));
    if (ctx.args.count("sweep")) sweep_ = ctx.args.at("sweep");
    if (!ctx.focus || !sweep_.empty()) return;
    const RunRow* row = ctx.catalog.find(ctx.focus);
    const std::string run = "run " + std::to_string(ctx.focus);
    if (!row || !row->run.sweep_id) {
      if (spec_path_.empty())
        focus_note_ = run + " is in no sweep; tables summarise a sweep's runs: choose a spec (or --arg table=NAME).";
      return;
    }
    const std::int64_t sweep = *row->run.sweep_id;
    sweep_ = std::to_string(sweep);
    if (spec_path_.empty()) spec_path_ = spec_for_sweep(sweep, row->sweep_name);
    focus_note_ = "Table of " + run + "'s sweep " + row->sweep_name + " (#" + sweep_ + ").";
  }

  // The first listed spec whose select.sweep names this sweep; the sweep summary when none does.
  std::string spec_for_sweep(std::int64_t id, const std::string& name) const {
    for (const auto& path : specs_) {
      try {
        for (const SweepRef& ref : load_table_spec(path).select.sweeps)
          if (ref.id ? *ref.id == id : ref.name == name) return path;
      } catch (const std::exception&) {
        // a broken spec shows its error when chosen
      }
    }
    const auto summary = std::find_if(specs_.begin(), specs_.end(), [](const std::string& p) {
      return std::filesystem::path(p).filename() == "sweep_summary.toml";
    });
    return summary == specs_.end() ? "" : *summary;
  }

  void list_specs(ViewerContext& ctx) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(ctx.tables_dir, ec))
      if (e.path().extension() == ".toml") specs_.push_back(e.path().string());
    std::sort(specs_.begin(), specs_.end());
  }

  // "mohd_table2" -> <tables_dir>/mohd_table2.toml; paths stay as given.
  static std::string resolve(const ViewerContext& ctx, const std::string& name) {
    if (name.find('/') != std::string::npos || name.size() > 5 && name.compare(name.size() - 5, 5, ".toml") == 0) return name;
    return ctx.tables_dir + "/" + name + ".toml";
  }

  void build(ViewerContext& ctx) {
    built_generation_ = ctx.generation;
    error_.clear();
    try {
      TableSpec spec = load_table_spec(spec_path_);
      if (!sweep_.empty()) spec.select.sweeps = parse_sweep_refs(sweep_);
      spec.allow_mixed_builds = true;  // the viewer inspects any store; the provenance names the builds
      RunStoreOptions options;
      options.read_only = true;
      table_ = build_table(spec, RunStore(ctx.catalog.path(), options));
    } catch (const std::exception& e) {
      error_ = e.what();
      table_.reset();
    }
  }

  void render(ViewerContext& ctx, const Table& t) {
    ImGui::TextWrapped("%s", t.title.c_str());
    if (!t.caption.empty()) ImGui::TextDisabled("%s", t.caption.c_str());
    const bool compared = !t.compare_reference.empty();  // a paired-difference column after each column
    const int per_header = compared ? 2 : 1;
    const int columns = static_cast<int>(t.row_keys.size() + t.headers.size() * per_header);
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
    const float height = std::max(150.0f, ImGui::GetContentRegionAvail().y * 0.65f);
    if (columns > 0 && columns <= 64 && ImGui::BeginTable("table", columns, flags, ImVec2(0, height))) {
      ImGui::TableSetupScrollFreeze(static_cast<int>(t.row_keys.size()), 1);
      for (const auto& k : t.row_keys) ImGui::TableSetupColumn(k.c_str());
      for (const auto& h : t.headers) {
        ImGui::TableSetupColumn(h.label.c_str());
        if (compared) ImGui::TableSetupColumn(("diff vs " + t.compare_reference + " [95% CI]").c_str());  // the font is ASCII
      }
      ImGui::TableHeadersRow();
      for (const auto& row : t.rows) {
        ImGui::TableNextRow();
        ++plot_stats().rows;
        for (std::size_t k = 0; k < row.keys.size(); ++k) {
          ImGui::TableSetColumnIndex(static_cast<int>(k));
          ImGui::TextUnformatted(row.keys[k].kind == KeyValue::Kind::missing ? "-" : row.keys[k].text.c_str());
        }
        for (std::size_t c = 0; c < row.cells.size(); ++c) {
          ImGui::TableSetColumnIndex(static_cast<int>(row.keys.size() + c * per_header));
          const TableCell& cell = row.cells[c];
          const std::string text = cell_text(cell, t.metas[t.headers[c].meta].digits, "+-", "-");  // the font is ASCII
          if (cell.best) ImGui::TextColored(ImVec4(0.45f, 0.9f, 0.45f, 1), "%s", text.c_str());
          else ImGui::TextUnformatted(text.c_str());
          if (cell.n > 0 && ImGui::IsItemHovered()) {
            std::string runs;
            for (auto r : cell.runs) runs += (runs.empty() ? "" : ", ") + std::to_string(r);
            ImGui::SetTooltip("%.10g (runs %s)", cell.mean, runs.c_str());
          }
          if (!compared) continue;
          ImGui::TableSetColumnIndex(static_cast<int>(row.keys.size() + c * per_header + 1));
          ImGui::TextUnformatted(comparison_text(row, cell, t.metas[t.headers[c].meta].digits, "-").c_str());
        }
      }
      ImGui::EndTable();
    }
    ImGui::Text("%zu rows; %s", t.rows.size(), t.selection.c_str());
    ImGui::TextWrapped("builds: %s", t.builds.c_str());
    for (const auto& w : t.warnings) show_message(ctx, "warning: " + w);
    if (ImGui::CollapsingHeader("Definitions")) {
      for (const auto& m : t.metas)
        for (const auto& d : m.definitions) ImGui::BulletText("%s: %s", m.label.c_str(), d.c_str());
    }
  }
};

}  // namespace

MOXLAB_VIEWER_PANEL(TablesPanel, 50)

}  // namespace moxlab::viewer
