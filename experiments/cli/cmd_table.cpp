// `moxlab table SPEC.toml [--format md|csv|latex] [--out FILE] [--store PATH] [--sweep NAME|ID]
// [--allow-mixed-builds]`: a result table from the run store (docs/tables.md). The store is opened
// read-only; honesty warnings go to stderr. Runs of several git revisions or of a dirty tree are refused
// unless --allow-mixed-builds (or MOXLAB_ALLOW_MIXED_BUILDS=1, for tests run from a development tree).
#include <iostream>
#include <memory>

#include "core/common/atomic_file.h"
#include "core/store/run_store.h"
#include "experiments/cli/commands.h"
#include "experiments/report/table_build.h"
#include "experiments/report/table_format.h"
#include "experiments/report/table_spec.h"

namespace moxlab::cli {

void register_table(CLI::App& app) {
  struct Args {
    std::string spec, format = "md", out, store = "runs/runs.db", sweep;
    bool allow_mixed_builds = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("table", "Result table (Markdown, CSV, LaTeX) from the run store");
  cmd->add_option("spec", a->spec, "table spec TOML (docs/tables.md)")->required();
  cmd->add_option("--format", a->format, "md, csv or latex")->capture_default_str();
  cmd->add_option("--out", a->out, "write here (atomically) instead of stdout");
  cmd->add_option("--store", a->store, "run store")->capture_default_str();
  cmd->add_option("--sweep", a->sweep, "sweep name or id, or a comma-separated list (overrides select.sweep)");
  cmd->add_flag("--allow-mixed-builds", a->allow_mixed_builds,
                "pool runs of different git revisions or of a dirty tree (the table says so)")
      ->envname("MOXLAB_ALLOW_MIXED_BUILDS");
  cmd->callback([a]() {
    const TableFormat format = parse_table_format(a->format);
    TableSpec spec = load_table_spec(a->spec);
    if (!a->sweep.empty()) spec.select.sweeps = parse_sweep_refs(a->sweep);
    spec.allow_mixed_builds = a->allow_mixed_builds;
    RunStoreOptions o;
    o.read_only = true;
    const Table table = build_table(spec, RunStore(a->store, o));
    for (const auto& w : table.warnings) std::cerr << "moxlab: warning: " << w << "\n";
    const std::string text = format_table(table, format);
    if (a->out.empty()) std::cout << text;
    else write_text_atomically(a->out, text);
  });
}

}  // namespace moxlab::cli
