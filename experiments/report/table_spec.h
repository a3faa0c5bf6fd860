// TableSpec: what `moxlab table` shows, read from a TOML file (docs/tables.md has the full guide).
//
//   title = "Dense tiny: learning rate x width"      # required
//   caption = "..."                                   # optional
//   [select]                                          # which runs; every key optional
//   sweep = "tiny_lr_width"                           # sweep name (the newest sweep so named) or id (3)
//   kind = "train"                                    # runs.kind
//   status = ["finished"]                             # default ["finished"]
//   runs = [4, 5]                                     # explicit run ids
//   where = { "model.dim" = 192 }                     # config equality filters (dotted config keys);
//                                                     # a list means any of: { "run.variant" = ["a", "b"] }
//   [layout]
//   rows = ["model.dim", "train.lr"]                  # required: config keys or metric placeholders
//   columns_by = "model.n_layers"                     # optional: repeat the columns per value of this key
//   seed_key = "train.seed"                           # default; rows pool runs that differ only in it
//   order = ["dense", "mohd_50"]                      # optional: these values of the first row key come
//                                                     # first, in this order; the rest follow sorted
//   [[column]]                                        # one or more
//   metric = "ppl/val/all"                            # result key; "{name}" matches one [^/.]+ segment
//                                                     # "curve/<metric key>/<step>" reads a metric curve
//                                                     # of the run (e.g. curve/val/ppl/{step})
//   label = "val ppl"                                 # default: the metric pattern
//                                                     # metric = ["a", "b"] with label = ["A", "B"]:
//                                                     # one column each, the other keys shared
//   digits = 2                                        # optional (default: 0 for integral columns, else 3)
//   better = "lower"                                  # optional: "lower" | "higher" -> best cell in bold
//   paper = "lower"                                   # optional: the direction the paper claims for the
//                                                     # method against the reference ([compare]); default
//                                                     # `better`; "none": interval without a verdict
//   [compare]                                         # optional: paired differences against a reference row
//   reference = "dense"                               # a value of the first row key; each other row's
//                                                     # runs pair with the reference row's by seed_key
//                                                     # (with several row keys, with the reference row that
//                                                     # matches the other keys, else the only one)
//
// A key named in rows/columns_by is a metric placeholder when some column's metric contains "{key}",
// else a config key. Every column must contain every placeholder used in the layout, and every
// placeholder of a column must be used there, so each (run, row, column) has at most one value.
// Unknown keys, wrong types and empty required fields are one-line moxlab::Errors naming the key and
// the file.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/store/run_records.h"

namespace moxlab {

enum class Better { none, lower, higher };

struct TableColumn {
  std::string metric;  // result key pattern
  std::string label;
  std::optional<int> digits;
  Better better = Better::none;
  int paper = 0;  // the paper's claimed direction of method - reference: -1 lowers, +1 raises, 0 none
};

// A sweep is named either by its name or by its id.
struct SweepRef {
  std::string name;
  std::optional<std::int64_t> id;
};

struct TableSelect {
  std::vector<SweepRef> sweeps;  // TOML select.sweep: one name or id, or a list (runs of any of them)
  std::optional<std::string> kind;
  std::vector<RunStatus> status{RunStatus::finished};
  std::vector<std::int64_t> runs;                            // empty: any
  std::vector<std::pair<std::string, nlohmann::json>> where;  // dotted config key, required value (array: any of)
};

struct TableLayout {
  std::vector<std::string> rows;
  std::string columns_by;  // "" = no pivot
  std::string seed_key = "train.seed";
  std::vector<std::string> order;  // display order of the first row key's values (listed first)
};

struct TableSpec {
  std::string origin;  // the file it came from (for messages)
  std::string title;
  std::string caption;
  TableSelect select;
  TableLayout layout;
  std::vector<TableColumn> columns;
  std::string compare_reference;  // [compare] reference: "" = no paired differences
  // Not in the TOML: set by `moxlab table --allow-mixed-builds` (and the viewer, which inspects rather than
  // reports). Otherwise runs of different git revisions, or of a dirty tree, in one table are an Error.
  bool allow_mixed_builds = false;

  // The placeholder names of the layout (rows, then columns_by), in that order.
  std::vector<std::string> placeholders() const;
  bool is_placeholder(const std::string& key) const;
};

TableSpec load_table_spec(const std::string& path);
// Parses spec text; origin names the source in error messages.
TableSpec parse_table_spec(const std::string& toml_text, const std::string& origin);

// "{name}" placeholders of a metric pattern, in order of first appearance.
std::vector<std::string> metric_placeholders(const std::string& pattern);

// Parses a --sweep argument: all digits = id, anything else = name.
SweepRef parse_sweep_ref(const std::string& text);
// A comma-separated list of them ("tomoe_tiny,tomoe_tiny_baselines"; spaces around names are ignored).
std::vector<SweepRef> parse_sweep_refs(const std::string& text);

}  // namespace moxlab
