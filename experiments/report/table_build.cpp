#include "experiments/report/table_build.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "core/common/error.h"

namespace moxlab {

namespace {

using FlatConfig = std::map<std::string, nlohmann::json>;
using Captures = std::map<std::string, std::string>;

// {"model":{"dim":192}} and {"model.dim":192} both become model.dim -> 192.
void flatten(const nlohmann::json& j, const std::string& prefix, FlatConfig& out) {
  if (!j.is_object() || (j.empty() && !prefix.empty())) {
    out[prefix] = j;
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
}

struct RunData {
  RunRecord record;
  FlatConfig config;
  std::vector<ResultRecord> results;

  const nlohmann::json* get(const std::string& key) const {
    auto it = config.find(key);
    return it == config.end() ? nullptr : &it->second;
  }
};

// A metric pattern compiled to a regex; {name} matches one [^/.]+ segment.
class MetricPattern {
 public:
  explicit MetricPattern(const std::string& pattern) {
    std::string re;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] == '{') {
        const std::size_t close = pattern.find('}', i);
        names_.push_back(pattern.substr(i + 1, close - i - 1));
        re += "([^/.]+)";
        i = close;
      } else {
        if (std::string("\\^$.|?*+()[]{}").find(pattern[i]) != std::string::npos) re += '\\';
        re += pattern[i];
      }
    }
    re_ = std::regex(re);
  }

  std::optional<Captures> match(const std::string& key) const {
    std::smatch m;
    if (!std::regex_match(key, m, re_)) return std::nullopt;
    Captures cap;
    for (std::size_t i = 0; i < names_.size(); ++i) {
      auto [it, fresh] = cap.emplace(names_[i], m[i + 1].str());
      if (!fresh && it->second != m[i + 1].str()) return std::nullopt;  // {x} twice must match the same text
    }
    return cap;
  }

 private:
  std::regex re_;
  std::vector<std::string> names_;
};

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string join_ids(const std::vector<std::int64_t>& ids) {
  std::vector<std::string> parts;
  for (auto id : ids) parts.push_back(std::to_string(id));
  return join(parts, ", ");
}

void add_distinct(std::vector<std::string>& list, const std::string& s) {
  if (!s.empty() && std::find(list.begin(), list.end(), s) == list.end()) list.push_back(s);
}

std::string meta_text(const nlohmann::json& meta, const char* key) {
  auto it = meta.find(key);
  if (it == meta.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string short_rev(const std::string& rev) {
  const std::size_t plus = rev.find('+');
  return rev.substr(0, std::min<std::size_t>(plus, 12)) + (plus == std::string::npos ? "" : rev.substr(plus));
}

struct Selection {
  std::vector<RunData> runs;
  std::string summary;
  std::vector<std::string> warnings;
};

// The run's metric curves as results "curve/<metric key>/<step>" (the value logged at that step), so a
// column can read a curve at chosen steps: metric = "curve/val/ppl/{step}" with columns_by = "step".
void add_curve_results(const RunStore& store, std::int64_t run, std::vector<ResultRecord>& out) {
  for (const auto& key : store.metric_keys(run)) {
    const std::string metric = key.substr(key.rfind('/') + 1);
    const std::string definition =
        key.rfind("val/", 0) == 0
            ? "value of the run's curve '" + key + "' at that step: the trainer's periodic validation "
              "(train.eval_tokens tokens per domain from the start of each validation split)"
            : "value of the run's curve '" + key + "' logged at that step";
    const std::string meta = nlohmann::json{{"metric", metric}, {"split", key.rfind("val/", 0) == 0 ? "val" : "train"},
                                            {"definition", definition}}.dump();
    for (const MetricPoint& p : store.metrics(run, key))
      out.push_back({run, "curve/" + key + "/" + std::to_string(p.step), p.value, meta});
  }
}

bool where_matches(const nlohmann::json* value, const nlohmann::json& wanted) {
  if (!value) return false;
  if (!wanted.is_array()) return *value == wanted;
  return std::find(wanted.begin(), wanted.end(), *value) != wanted.end();
}

Selection select_runs(const TableSelect& sel, const RunStore& store, bool with_curves) {
  RunFilter filter;
  filter.kind = sel.kind;
  std::vector<std::string> how;
  std::vector<std::int64_t> sweep_ids;
  for (const auto& ref : sel.sweeps) {
    const std::int64_t id = resolve_sweep(ref, store);
    if (std::find(sweep_ids.begin(), sweep_ids.end(), id) != sweep_ids.end()) continue;  // named twice: its runs once
    sweep_ids.push_back(id);
    how.push_back("sweep " + std::to_string(sweep_ids.back()) + (ref.name.empty() ? "" : " \"" + ref.name + "\""));
  }
  if (sel.kind) how.push_back("kind " + *sel.kind);
  std::vector<std::string> statuses;
  for (auto s : sel.status) statuses.push_back(to_string(s));
  how.push_back("status " + join(statuses, "|"));
  if (!sel.runs.empty()) how.push_back("runs " + join_ids(sel.runs));
  for (const auto& [key, value] : sel.where) how.push_back(key + "=" + value.dump());

  Selection out;
  std::vector<RunData> candidates;
  std::vector<RunRecord> found;
  if (sweep_ids.empty()) found = store.find_runs(filter);
  for (auto id : sweep_ids) {
    filter.sweep_id = id;
    for (auto& r : store.find_runs(filter)) found.push_back(std::move(r));
  }
  for (auto& r : found) {
    if (std::find(sel.status.begin(), sel.status.end(), r.status) == sel.status.end()) continue;
    if (!sel.runs.empty() && std::find(sel.runs.begin(), sel.runs.end(), r.id) == sel.runs.end()) continue;
    RunData d;
    const auto config = nlohmann::json::parse(r.config_json, nullptr, false);
    require(!config.is_discarded(), "run " + std::to_string(r.id) + " has malformed config JSON in " + store.path());
    flatten(config, "", d.config);
    d.record = std::move(r);
    candidates.push_back(std::move(d));
  }
  for (const auto& kv : sel.where) {  // not a structured binding: C++17 lambdas cannot capture one (clang)
    const std::string& key = kv.first;
    require(std::any_of(candidates.begin(), candidates.end(), [&](const RunData& d) { return d.get(key); }),
            "select.where key '" + key + "' is not a config key of any candidate run in " + store.path());
  }
  for (auto& d : candidates) {
    const bool keep = std::all_of(sel.where.begin(), sel.where.end(), [&](const auto& kv) {
      return where_matches(d.get(kv.first), kv.second);
    });
    if (!keep) continue;
    d.results = store.results(d.record.id);
    if (with_curves) add_curve_results(store, d.record.id, d.results);
    out.runs.push_back(std::move(d));
  }
  for (auto id : sel.runs)
    if (std::none_of(out.runs.begin(), out.runs.end(), [&](const RunData& d) { return d.record.id == id; }))
      out.warnings.push_back("select.runs: run " + std::to_string(id) + " is absent or filtered out");
  std::vector<std::int64_t> ids;
  for (const auto& d : out.runs) ids.push_back(d.record.id);
  require(!ids.empty(), "no runs match the selection (" + join(how, ", ") + ") in " + store.path());
  out.summary = std::to_string(ids.size()) + (ids.size() == 1 ? " run (" : " runs (") + join_ids(ids) +
                ") selected by " + join(how, ", ");
  return out;
}

// One run's value in a cell; at_chance: its result's meta says the value's 95% interval contains chance
// (zero-shot accuracies, core/eval/tasks/choice_margin.h).
struct Sample {
  std::int64_t run;
  double value;
  bool at_chance;
};
using Samples = std::vector<Sample>;

TableCell aggregate(const Samples& samples) {
  TableCell c;
  c.n = static_cast<int>(samples.size());
  if (c.n == 0) return c;
  double sum = 0;
  for (const auto& s : samples) {
    c.runs.push_back(s.run);
    c.values.push_back(s.value);
    c.at_chance += s.at_chance ? 1 : 0;
    sum += s.value;
  }
  c.mean = sum / c.n;
  if (c.n > 1) {
    double ss = 0;
    for (const auto& s : samples) ss += (s.value - c.mean) * (s.value - c.mean);
    c.std_err = std::sqrt(ss / (c.n - 1) / c.n);
  }
  return c;
}

// Config keys in which the runs disagree, besides those the config hash ignores too (run.*, train.threads),
// the seed key and the layout keys.
std::vector<std::string> differing_keys(const std::vector<const RunData*>& runs, const TableLayout& layout) {
  std::set<std::string> keys;
  for (const auto* r : runs)
    for (const auto& kv : r->config) keys.insert(kv.first);
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (k.rfind("run.", 0) == 0 || k == "train.threads" || k == layout.seed_key || k == layout.columns_by ||
        std::find(layout.rows.begin(), layout.rows.end(), k) != layout.rows.end())
      continue;
    const nlohmann::json* first = runs[0]->get(k);
    for (const auto* r : runs) {
      const nlohmann::json* v = r->get(k);
      if (!v != !first || (v && *v != *first)) {
        out.push_back(k);
        break;
      }
    }
  }
  return out;
}

void mark_best(Table& t) {
  for (std::size_t h = 0; h < t.headers.size(); ++h) {
    const Better better = t.metas[t.headers[h].meta].better;
    if (better == Better::none) continue;
    std::optional<double> best;
    for (const auto& row : t.rows) {
      const TableCell& c = row.cells[h];
      if (c.n == 0 || !std::isfinite(c.mean)) continue;
      if (!best || (better == Better::lower ? c.mean < *best : c.mean > *best)) best = c.mean;
    }
    for (auto& row : t.rows) row.cells[h].best = best && row.cells[h].n > 0 && row.cells[h].mean == *best;
  }
}


// A layout key that is neither a placeholder nor in any config is a typo, not a row of missing values.
void check_layout_keys(const TableSpec& spec, const std::vector<RunData>& runs) {
  std::vector<std::string> keys = spec.layout.rows;
  if (!spec.layout.columns_by.empty()) keys.push_back(spec.layout.columns_by);
  keys.push_back(spec.layout.seed_key);
  for (const auto& k : keys) {
    if (spec.is_placeholder(k)) continue;
    const std::string what = k == spec.layout.seed_key ? "layout.seed_key '" + k + "' is not"
                                                       : "layout key '" + k + "' is neither a placeholder of a column metric nor";
    require(std::any_of(runs.begin(), runs.end(), [&](const RunData& d) { return d.get(k); }),
            what + " a config key of the selected runs (" + spec.origin + ")");
  }
}


struct RowAcc {
  std::vector<const RunData*> runs;                             // ascending ids
  std::map<std::pair<KeyValue, std::size_t>, Samples> samples;  // (column group, spec column)
};

// Every matching result of every run, sorted into rows and column groups, with what its meta says.
struct Collected {
  std::map<std::vector<KeyValue>, RowAcc> rows;
  std::set<KeyValue> groups;  // one missing value without columns_by
  std::vector<std::map<std::string, std::vector<std::int64_t>>> metric_runs;  // per column: meta metric -> runs
  std::vector<std::vector<std::string>> splits, definitions;                  // per column, distinct
  std::vector<bool> integral;                                                 // per column
};

Collected collect(const TableSpec& spec, const std::vector<RunData>& runs) {
  const TableLayout& layout = spec.layout;
  const std::size_t ncols = spec.columns.size();
  const std::vector<std::string> placeholders = spec.placeholders();
  std::vector<MetricPattern> patterns;
  for (const auto& c : spec.columns) patterns.emplace_back(c.metric);
  Collected out;
  out.metric_runs.resize(ncols);
  out.splits.resize(ncols);
  out.definitions.resize(ncols);
  out.integral.assign(ncols, true);

  for (const RunData& run : runs) {
    auto value_of = [&](const std::string& key, const Captures& cap) {
      const bool placeholder = std::find(placeholders.begin(), placeholders.end(), key) != placeholders.end();
      return placeholder ? KeyValue::from_capture(cap.at(key)) : KeyValue::from_json(run.get(key));
    };
    auto member = [&](const Captures& cap) -> RowAcc& {
      std::vector<KeyValue> keys;
      for (const auto& k : layout.rows) keys.push_back(value_of(k, cap));
      RowAcc& acc = out.rows[keys];
      if (acc.runs.empty() || acc.runs.back() != &run) acc.runs.push_back(&run);
      return acc;
    };
    auto group = [&](const Captures& cap) {
      const KeyValue g = layout.columns_by.empty() ? KeyValue{} : value_of(layout.columns_by, cap);
      out.groups.insert(g);
      return g;
    };
    if (placeholders.empty()) {  // a run belongs to its row even when it lacks every metric
      member({});
      group({});
    }
    for (const ResultRecord& r : run.results) {
      for (std::size_t c = 0; c < ncols; ++c) {
        auto cap = patterns[c].match(r.key);
        if (!cap) continue;
        auto meta = nlohmann::json::parse(r.meta_json, nullptr, false);
        if (!meta.is_object()) meta = nlohmann::json::object();
        const bool at_chance = meta.value("at_chance", false);
        member(*cap).samples[{group(*cap), c}].push_back({run.record.id, r.value, at_chance});
        out.metric_runs[c][meta_text(meta, "metric")].push_back(run.record.id);
        add_distinct(out.splits[c], meta_text(meta, "split"));
        add_distinct(out.definitions[c], meta_text(meta, "definition"));
        out.integral[c] = out.integral[c] && std::isfinite(r.value) && r.value == std::floor(r.value);
      }
    }
  }
  if (out.groups.empty()) out.groups.insert(KeyValue{});
  return out;
}

// Throws when one column's results disagree on their meta "metric".
std::vector<ColumnMeta> column_metas(const TableSpec& spec, const Collected& col) {
  std::vector<ColumnMeta> metas;
  for (std::size_t c = 0; c < spec.columns.size(); ++c) {
    const TableColumn& column = spec.columns[c];
    if (col.metric_runs[c].size() > 1) {
      std::vector<std::string> parts;
      for (const auto& [metric, ids] : col.metric_runs[c]) parts.push_back("\"" + metric + "\" (runs " + join_ids(ids) + ")");
      throw Error("column '" + column.label + "' (" + column.metric + ") mixes results of different meta metrics: " +
                  join(parts, " vs ") + " (" + spec.origin + ")");
    }
    ColumnMeta m;
    m.label = column.label;
    if (!col.metric_runs[c].empty()) m.metric = col.metric_runs[c].begin()->first;
    m.split = join(col.splits[c], "; ");
    m.definitions = col.definitions[c];
    m.digits = column.digits ? *column.digits : (col.integral[c] ? 0 : 3);
    m.better = column.better;
    m.paper = column.paper;
    metas.push_back(m);
  }
  return metas;
}

// Pooled runs with different configs, and runs of one cell that repeat a seed (not independent samples).
void add_row_warnings(Table& t, const TableRow& row, const std::vector<const RunData*>& runs, const TableLayout& layout) {
  const std::string label = row_label(t, row);
  std::vector<std::int64_t> ids;
  for (const auto& p : row.runs) ids.push_back(p.run);
  const auto diff = differing_keys(runs, layout);
  if (!diff.empty())
    t.warnings.push_back("row " + label + " pools runs " + join_ids(ids) + " whose configs differ in " + join(diff, ", "));
  std::vector<std::string> repeated;
  for (const TableCell& cell : row.cells) {
    std::map<std::string, std::vector<std::int64_t>> by_seed;
    for (std::size_t i = 0, j = 0; i < row.runs.size() && j < cell.runs.size(); ++i)  // both ascending
      if (row.runs[i].run == cell.runs[j]) {
        if (!row.runs[i].seed.empty()) by_seed[row.runs[i].seed].push_back(cell.runs[j]);
        ++j;
      }
    for (const auto& [seed, same] : by_seed)
      if (same.size() > 1)
        add_distinct(repeated, "row " + label + ": runs " + join_ids(same) + " share " + layout.seed_key + "=" + seed +
                                   " (not independent samples)");
  }
  t.warnings.insert(t.warnings.end(), repeated.begin(), repeated.end());
}

// One study is one pinned build: the selected runs must share one clean git revision. Returns the
// provenance line; throws naming the revisions unless mixed builds are allowed.
std::string check_builds(const std::vector<RunData>& runs, bool allow_mixed, const std::string& origin) {
  std::map<std::string, std::vector<std::int64_t>> by_rev;
  for (const auto& d : runs) by_rev[d.record.git_rev].push_back(d.record.id);
  auto unpinned = [](const std::string& rev) {
    return rev.empty() || rev == "unknown" || rev.find("+dirty") != std::string::npos;
  };
  std::vector<std::string> parts;
  bool clean = by_rev.size() == 1;
  for (const auto& [rev, ids] : by_rev) {
    clean = clean && !unpinned(rev);
    parts.push_back((rev.empty() ? std::string("no revision") : short_rev(rev)) + " (runs " + join_ids(ids) + ")");
  }
  if (clean) return "one build: " + by_rev.begin()->first;
  const std::string what = by_rev.size() > 1 ? "come from " + std::to_string(by_rev.size()) + " builds"
                                              : "come from a build that cannot be pinned (uncommitted tree or no revision)";
  if (allow_mixed) return "MIXED BUILDS (allowed by --allow-mixed-builds): " + join(parts, "; ");
  throw Error("the selected runs " + what + ": " + join(parts, "; ") +
              "; one study is one pinned build (retrain with one committed build, or pass --allow-mixed-builds "
              "to pool them, which the table then says) (" + origin + ")");
}

// Seed value -> the cell's value, for seeds that occur once in the cell; repeated seeds go to `repeated`.
std::map<std::string, double> values_by_seed(const TableRow& row, const TableCell& cell, std::set<std::string>& repeated) {
  std::map<std::int64_t, std::string> seed_of;
  for (const auto& p : row.runs) seed_of[p.run] = p.seed;
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < cell.runs.size(); ++i) {
    const std::string& seed = seed_of[cell.runs[i]];
    if (!out.emplace(seed, cell.values[i]).second) repeated.insert(seed);
  }
  for (const auto& seed : repeated) out.erase(seed);
  return out;
}

CellComparison compare_cells(const TableRow& row, const TableCell& cell, const TableRow& ref, const TableCell& ref_cell,
                             int paper) {
  std::set<std::string> repeated;
  const auto mine = values_by_seed(row, cell, repeated);
  const auto theirs = values_by_seed(ref, ref_cell, repeated);
  CellComparison c;
  std::vector<double> method, reference;
  for (const auto& [seed, v] : mine) {
    auto it = theirs.find(seed);
    if (it == theirs.end() || repeated.count(seed)) continue;
    method.push_back(v);
    reference.push_back(it->second);
  }
  std::set<std::string> unpaired = repeated;
  for (const auto* side : {&mine, &theirs})
    for (const auto& kv : *side)
      if (!(mine.count(kv.first) && theirs.count(kv.first))) unpaired.insert(kv.first);
  c.unpaired.assign(unpaired.begin(), unpaired.end());
  if (method.size() >= 2) {
    c.difference = paired_difference(method, reference);
    if (paper != 0) c.verdict = verdict(c.difference, paper);
  } else if (method.size() == 1) {
    c.difference.n = 1;
    c.difference.mean = method[0] - reference[0];
  }
  return c;
}

// The reference row of `row`: first key = the reference value and the other keys equal, else the only
// row with the reference value.
const TableRow* reference_row_of(const Table& t, const TableRow& row) {
  std::vector<const TableRow*> refs;
  for (const auto& r : t.rows)
    if (r.reference) refs.push_back(&r);
  for (const TableRow* r : refs)
    if (std::equal(r->keys.begin() + 1, r->keys.end(), row.keys.begin() + 1)) return r;
  return refs.size() == 1 ? refs[0] : nullptr;
}

void add_comparisons(Table& t, const std::string& reference, const std::string& origin) {
  bool found = false;
  for (auto& row : t.rows) {
    row.reference = row.keys[0].kind != KeyValue::Kind::missing && row.keys[0].text == reference;
    found = found || row.reference;
  }
  require(found, "compare.reference '" + reference + "' is not a value of " + t.row_keys[0] + " among the selected runs (" +
                     origin + ")");
  for (auto& row : t.rows) {
    if (row.reference) continue;
    const TableRow* ref = reference_row_of(t, row);
    if (!ref) {
      t.warnings.push_back("row " + row_label(t, row) + " has no matching reference row (" + t.row_keys[0] + "=" +
                           reference + "): not compared");
      continue;
    }
    row.compared_with = row_label(t, *ref);
    for (std::size_t h = 0; h < t.headers.size(); ++h)
      row.cells[h].comparison = compare_cells(row, row.cells[h], *ref, ref->cells[h], t.metas[t.headers[h].meta].paper);
  }
}

}  // namespace

std::optional<nlohmann::json> config_value(const std::string& config_json, const std::string& key) {
  const auto config = nlohmann::json::parse(config_json, nullptr, false);
  if (config.is_discarded()) return std::nullopt;
  FlatConfig flat;
  flatten(config, "", flat);
  const auto it = flat.find(key);
  if (it == flat.end()) return std::nullopt;
  return it->second;
}

std::int64_t resolve_sweep(const SweepRef& ref, const RunStore& store) {
  if (ref.id) return store.get_sweep(*ref.id).id;  // Error when absent
  std::optional<std::int64_t> id;
  for (const auto& s : store.list_sweeps())  // ordered by id: the newest of that name wins
    if (s.name == ref.name) id = s.id;
  require(id.has_value(), "no sweep named '" + ref.name + "' in " + store.path());
  return *id;
}

KeyValue KeyValue::from_json(const nlohmann::json* value) {
  KeyValue k;
  if (!value || value->is_null()) return k;
  k.kind = value->is_number() ? Kind::number : Kind::text;
  if (value->is_number()) k.number = value->get<double>();
  k.text = value->is_string() ? value->get<std::string>() : value->dump();
  return k;
}

KeyValue KeyValue::from_capture(const std::string& text) {
  KeyValue k;
  k.kind = Kind::text;
  k.text = text;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(v)) {
    k.kind = Kind::number;
    k.number = v;
  }
  return k;
}

bool KeyValue::operator<(const KeyValue& o) const {
  if (kind != o.kind) return kind < o.kind;
  if (kind == Kind::number && number != o.number) return number < o.number;
  return text < o.text;
}

bool KeyValue::operator==(const KeyValue& o) const { return !(*this < o) && !(o < *this); }

std::string row_label(const Table& table, const TableRow& row) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < row.keys.size(); ++i)
    parts.push_back(table.row_keys[i] + "=" + (row.keys[i].kind == KeyValue::Kind::missing ? "—" : row.keys[i].text));
  return join(parts, ", ");
}

Table build_table(const TableSpec& spec, const RunStore& store) {
  const bool with_curves = std::any_of(spec.columns.begin(), spec.columns.end(),
                                       [](const TableColumn& c) { return c.metric.rfind("curve/", 0) == 0; });
  Selection sel = select_runs(spec.select, store, with_curves);
  const std::string builds = check_builds(sel.runs, spec.allow_mixed_builds, spec.origin);
  check_layout_keys(spec, sel.runs);
  Collected col = collect(spec, sel.runs);
  Table t;
  t.title = spec.title;
  t.caption = spec.caption;
  t.row_keys = spec.layout.rows;
  t.selection = sel.summary;
  t.builds = builds;
  t.compare_reference = spec.compare_reference;
  t.seed_key = spec.layout.seed_key;
  t.warnings = sel.warnings;
  if (col.rows.empty()) t.warnings.push_back("no selected run has a result that matches a column metric");
  t.metas = column_metas(spec, col);
  const std::string& by = spec.layout.columns_by;
  for (const auto& g : col.groups)
    for (std::size_t c = 0; c < spec.columns.size(); ++c)
      t.headers.push_back({c, spec.columns[c].label +
                                  (by.empty() ? "" : " (" + by + "=" + (g.kind == KeyValue::Kind::missing ? "—" : g.text) + ")")});

  for (const auto& [keys, acc] : col.rows) {
    TableRow row;
    row.keys = keys;
    for (const auto& g : col.groups)
      for (std::size_t c = 0; c < spec.columns.size(); ++c) {
        auto it = acc.samples.find({g, c});
        row.cells.push_back(aggregate(it == acc.samples.end() ? Samples{} : it->second));
      }
    for (const RunData* r : acc.runs)
      row.runs.push_back({r->record.id, KeyValue::from_json(r->get(spec.layout.seed_key)).text,
                          r->record.config_hash.substr(0, 12), short_rev(r->record.git_rev),
                          // Imported models have no training data: say so instead of printing nothing.
                          r->record.data_digest.empty() ? "none" : r->record.data_digest.substr(0, 12)});
    add_row_warnings(t, row, acc.runs, spec.layout);
    t.rows.push_back(std::move(row));
  }
  if (!spec.layout.order.empty()) {  // listed values of the first row key first, in the listed order
    const auto& order = spec.layout.order;
    auto rank = [&](const TableRow& r) {
      return static_cast<std::size_t>(std::find(order.begin(), order.end(), r.keys[0].text) - order.begin());
    };
    std::stable_sort(t.rows.begin(), t.rows.end(), [&](const TableRow& a, const TableRow& b) { return rank(a) < rank(b); });
  }
  mark_best(t);
  if (!spec.compare_reference.empty()) add_comparisons(t, spec.compare_reference, spec.origin);
  return t;
}

}  // namespace moxlab
