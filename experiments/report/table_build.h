// build_table: turns a TableSpec and a run store into a Table of aggregated cells with provenance.
//
// Runs are selected by select.* (status default finished), grouped into rows by the layout.rows values
// (config values by dotted key, or placeholder values captured from result keys) and, with columns_by,
// into column groups. Rows and column groups are sorted naturally (numbers numerically, text
// lexicographically, missing first), key by key. Each cell aggregates the runs of its row that have the
// metric: mean, standard error = sample standard deviation (n-1) / sqrt(n) (undefined for n = 1), n.
//
// With [compare], each cell of a non-reference row also carries its paired difference with the same
// column's cell of the reference row: the runs of both that share a seed value are paired, the per-seed
// differences (row - reference) give a mean and a 95% t-interval (paired_difference.h), and the column's
// paper direction a verdict. Seeds on one side only are listed, never paired.
//
// One study is one build: the selected runs' git revisions must be one clean revision, else an Error
// naming them, unless spec.allow_mixed_builds (then Table::builds says so in the provenance).
//
// Honesty checks: runs pooled in one row whose configs differ in keys other than run.*, the seed key and
// the layout keys, and runs of one cell that repeat a seed value, give a warning; a select.runs id that
// is not selected gives a warning; results of one column that disagree on their
// meta "metric" are an Error, as are layout keys that are neither placeholders nor config keys of any
// selected run, and a selection without runs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/store/run_store.h"
#include "experiments/report/paired_difference.h"
#include "experiments/report/table_spec.h"

namespace moxlab {

// A row-key or column-group value. Missing sorts first, then numbers (by value), then text.
struct KeyValue {
  enum class Kind { missing, number, text };
  Kind kind = Kind::missing;
  double number = 0;
  std::string text;  // as written: "0.003", "192", "dense_tiny"; "" when missing

  static KeyValue from_json(const nlohmann::json* value);  // nullptr = missing
  static KeyValue from_capture(const std::string& text);    // numeric text becomes a number

  bool operator<(const KeyValue& o) const;
  bool operator==(const KeyValue& o) const;
};

// A cell's paired comparison with the reference row's cell of its column ([compare]).
struct CellComparison {
  PairedDifference difference;        // n = the seeds both cells have; mean at n >= 1, sd and interval at n >= 2
  std::optional<Verdict> verdict;     // at n >= 2 when the column has a paper direction
  std::vector<std::string> unpaired;  // seed values present in only one of the two cells
};

struct TableCell {
  int n = 0;
  double mean = 0;     // meaningful when n > 0
  double std_err = 0;  // meaningful when n > 1
  std::vector<std::int64_t> runs;  // the runs that have the metric, ascending
  std::vector<double> values;      // their values, in the same order
  int at_chance = 0;               // of those, runs whose result is an accuracy within the 95% interval of chance
  bool best = false;               // the best mean of its column (better = lower/higher)
  std::optional<CellComparison> comparison;  // [compare], rows other than the reference
};

// What one spec column measures, from its results' meta_json (same for every column group).
struct ColumnMeta {
  std::string label;
  std::string metric;                    // meta "metric" (all results agree)
  std::string split;                     // distinct meta "split" values joined with "; "
  std::vector<std::string> definitions;  // distinct meta "definition" texts
  int digits = 3;                        // spec digits, else 0 for integral values, else 3
  Better better = Better::none;
  int paper = 0;                         // the paper's direction (TableColumn::paper)
};

// One rendered column: a spec column, within one column group.
struct TableHeader {
  std::size_t meta = 0;  // index into Table::metas
  std::string label;     // "val ppl" or, with columns_by, "val ppl (model.n_layers=4)"
};

struct RunProvenance {
  std::int64_t run = 0;
  std::string seed;         // value of the seed key
  std::string config_hash;  // 12 hex characters
  std::string git_rev;      // 12 characters (+dirty)
  std::string data_digest;  // 12 hex characters
};

struct TableRow {
  std::vector<KeyValue> keys;           // one per layout.rows key
  std::vector<TableCell> cells;         // one per header
  std::vector<RunProvenance> runs;      // the row's runs, ascending
  bool reference = false;               // the [compare] reference row
  std::string compared_with;            // a compared row: the reference row's label; "" when none matches
};

struct Table {
  std::string title;
  std::string caption;
  std::vector<std::string> row_keys;
  std::vector<ColumnMeta> metas;
  std::vector<TableHeader> headers;
  std::vector<TableRow> rows;
  std::string selection;              // which runs were selected, in words
  std::string compare_reference;      // [compare] reference ("" = no paired differences)
  std::string seed_key;               // what pairs runs
  std::string builds;                 // "one build: <rev>" or, when allowed, the mixed revisions in words
  std::vector<std::string> warnings;  // honesty-check findings, one line each
};

Table build_table(const TableSpec& spec, const RunStore& store);

// "model.dim=192, train.lr=0.003": a row's keys in words.
std::string row_label(const Table& table, const TableRow& row);

// A run's config value under a dotted key ("run.variant"), nested or flat JSON alike; nullopt when absent
// or when the JSON is malformed.
std::optional<nlohmann::json> config_value(const std::string& config_json, const std::string& key);

// The sweep a reference names: its id, or the newest sweep of that name. Error when absent.
std::int64_t resolve_sweep(const SweepRef& ref, const RunStore& store);

}  // namespace moxlab
