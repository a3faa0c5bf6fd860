#include "experiments/report/scorecard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include <toml++/toml.h>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/store/run_store.h"
#include "experiments/report/holm.h"
#include "experiments/report/table_build.h"
#include "experiments/report/table_format.h"

namespace moxlab {

namespace {

constexpr const char* kBegin = "<!-- scorecard:begin -->";
constexpr const char* kEnd = "<!-- scorecard:end -->";

std::string text_of(const toml::table& t, const std::string& key, const std::string& where, bool required) {
  const toml::node* n = t.get(key);
  if (!n) {
    if (required) throw Error(where + ": '" + key + "' is required");
    return "";
  }
  auto s = n->value_exact<std::string>();
  if (!s || s->empty()) throw Error(where + ": '" + key + "' must be a non-empty string");
  return *s;
}

// "0.89 M" for a parameter count, "18.4 M" for tokens.
std::string millions(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f M", v < 1e7 ? 2 : 1, v / 1e6);
  return buf;
}

std::string cell(std::string s) {
  for (char& ch : s)
    if (ch == '|') ch = '/';
  return s;
}

// Mean of a result over the runs of a row (nullopt when none has it).
std::optional<double> mean_result(const RunStore& store, const TableRow& row, const std::string& key) {
  double sum = 0;
  int n = 0;
  for (const auto& p : row.runs)
    if (auto r = store.result(p.run, key)) {
      sum += r->value;
      ++n;
    }
  if (n == 0) return std::nullopt;
  return sum / n;
}

// A row's cells; p (the paired t-test's two-sided p) and a verdict that rejects zero only when the row
// has a result, for the Holm adjustment over the rows.
struct RowText {
  std::string model, difference, verdict, source;
  std::optional<double> p;
  bool rejects_zero = false;
  int n = 0;  // paired seeds
};

RowText pending(const Claim& c, const std::string& why) { return {"—", why, "pending", c.store + ", sweep " + c.sweep, {}, false, 0}; }

// "0.024", or "< 0.001" below a thousandth.
std::string p_text(double p) {
  if (p < 0.001) return "< 0.001";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", p);
  return buf;
}

// Where a claim's runs stand: the seeds of the finished runs per row_key value (what the table will
// pair) and how many runs of the method the sweeps plan (members, or runs where a sweep has none). An
// Error when the method or the reference is neither planned nor run: a misspelt name must not read as
// "pending".
struct Progress {
  std::map<std::string, std::set<std::int64_t>> finished;
  std::size_t planned = 0;
};

Progress progress(const Claim& c, const RunStore& store, const std::string& where) {
  Progress p;
  std::set<std::string> seen;
  std::size_t members = 0, runs = 0;
  const auto value_of = [&](const std::string& config_json) {
    const auto v = config_value(config_json, c.row_key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
  };
  for (const auto& ref : parse_sweep_refs(c.sweep)) {
    std::int64_t id = 0;
    try {
      id = resolve_sweep(ref, store);
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
    for (const auto& m : store.sweep_members(id)) {
      const std::string v = value_of(m.config_json);
      if (v == c.method || v == c.reference) seen.insert(v);
      if (v == c.method) ++members;
    }
    RunFilter filter;
    filter.sweep_id = id;
    for (const auto& r : store.find_runs(filter)) {
      const std::string v = value_of(r.config_json);
      if (v != c.method && v != c.reference) continue;
      seen.insert(v);
      if (v == c.method) ++runs;
      if (r.status == RunStatus::finished) p.finished[v].insert(r.seed);
    }
  }
  for (const auto& name : {c.method, c.reference})
    require(seen.count(name) > 0, where + ": no run or member of sweep " + c.sweep + " has " + c.row_key + " = " + name);
  p.planned = std::max(members, runs);
  return p;
}

RowText evaluate(const Claim& c, const std::string& stores_dir, std::size_t index) {
  const std::string where = "claim " + std::to_string(index + 1) + " (" + c.paper + ": " + c.claim + ")";
  const std::string path = (std::filesystem::path(stores_dir) / c.store).string();
  if (!std::filesystem::exists(path)) return pending(c, "store not committed yet");
  RunStoreOptions o;
  o.read_only = true;
  const RunStore store(path, o);
  Progress p = progress(c, store, where);
  const auto paired_so_far = [&](std::size_t n) {
    return pending(c, std::to_string(n) + " of " + std::to_string(p.planned) + " seeds paired so far");
  };
  std::size_t paired = 0;
  for (auto seed : p.finished[c.method]) paired += p.finished[c.reference].count(seed);
  if (paired < 2) return paired_so_far(paired);  // build_table needs finished runs of both
  TableSpec spec;
  spec.origin = where;
  spec.title = c.claim;
  spec.select.sweeps = parse_sweep_refs(c.sweep);
  spec.select.where.emplace_back(c.row_key, nlohmann::json::array({c.method, c.reference}));
  spec.layout.rows = {c.row_key};
  TableColumn col;
  col.metric = c.metric;
  col.label = c.metric_label.empty() ? c.metric : c.metric_label;
  col.paper = c.direction;
  spec.columns = {col};
  spec.compare_reference = c.reference;
  Table t;
  try {
    t = build_table(spec, store);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
  const TableRow* method = nullptr;
  for (const auto& row : t.rows)
    if (!row.reference && row.keys[0].text == c.method) method = &row;
  require(method != nullptr, where + ": no finished run with " + c.row_key + " = " + c.method + " in sweep " + c.sweep);
  // A run can be finished while its member still evaluates (the final metrics come after the training
  // loop): the table, not the run status, says how many seeds pair.
  const CellComparison* cmp = method->cells[0].comparison ? &*method->cells[0].comparison : nullptr;
  const int n = cmp ? cmp->difference.n : 0;
  if (n < 2) return paired_so_far(static_cast<std::size_t>(n));

  RowText r;
  const auto params = mean_result(store, *method, "params/active");
  const auto tokens = mean_result(store, *method, "train/tokens_seen");
  r.model = (params ? millions(*params) + " active" : std::string("params unknown")) + ", " +
            (tokens ? millions(*tokens) + " tokens" : std::string("tokens unknown"));
  r.difference = interval_text(cmp->difference, 3);
  r.verdict = cmp->verdict ? verdict_name(*cmp->verdict) : "—";
  r.p = two_sided_p(cmp->difference);
  r.rejects_zero = cmp->verdict && *cmp->verdict != Verdict::inconclusive;
  r.n = cmp->difference.n;
  const std::string build = t.builds.rfind("one build: ", 0) == 0 ? t.builds.substr(11, 12) : t.builds;
  r.source = c.store + ", sweep " + c.sweep + ", build " + build;
  return r;
}

}  // namespace

std::vector<Claim> parse_claims(const std::string& toml_text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& err) {
    throw Error("claims " + origin + ":" + std::to_string(err.source().begin.line) + ": " + std::string(err.description()));
  }
  for (const auto& [k, node] : root)
    if (k.str() != "claim") throw Error("claims " + origin + ": unknown key '" + std::string(k.str()) + "'");
  const toml::array* arr = root.get("claim") ? root.get("claim")->as_array() : nullptr;
  require(arr && arr->is_array_of_tables() && !arr->empty(), "claims " + origin + ": needs [[claim]] tables");
  std::vector<Claim> out;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::table& t = *arr->get(i)->as_table();
    const std::string where = "claims " + origin + ": claim " + std::to_string(i + 1);
    for (const auto& [k, node] : t) {
      static const char* known[] = {"paper", "claim", "paper_number", "store", "sweep", "method", "reference",
                                    "row_key", "metric", "metric_label", "direction", "note"};
      bool ok = false;
      for (const char* name : known) ok = ok || k.str() == name;
      if (!ok) throw Error(where + ": unknown key '" + std::string(k.str()) + "'");
    }
    Claim c;
    c.paper = text_of(t, "paper", where, true);
    c.claim = text_of(t, "claim", where, true);
    c.paper_number = text_of(t, "paper_number", where, true);
    c.store = text_of(t, "store", where, true);
    c.sweep = text_of(t, "sweep", where, true);
    c.method = text_of(t, "method", where, true);
    c.reference = text_of(t, "reference", where, true);
    if (t.get("row_key")) c.row_key = text_of(t, "row_key", where, true);
    if (t.get("metric")) c.metric = text_of(t, "metric", where, true);
    c.metric_label = text_of(t, "metric_label", where, false);
    const std::string direction = text_of(t, "direction", where, true);
    require(direction == "lower" || direction == "higher", where + ": 'direction' must be \"lower\" or \"higher\", got \"" + direction + "\"");
    c.direction = direction == "lower" ? -1 : 1;
    c.note = text_of(t, "note", where, false);
    out.push_back(c);
  }
  return out;
}

std::vector<Claim> load_claims(const std::string& path) {
  require(file_exists(path), "cannot open claims file " + path);
  return parse_claims(read_file(path), path);
}

std::string scorecard_markdown(const std::vector<Claim>& claims, const std::string& stores_dir) {
  std::vector<RowText> rows;
  std::vector<double> raw;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    rows.push_back(evaluate(claims[i], stores_dir, i));
    if (rows.back().p && rows.back().n >= 3) raw.push_back(*rows.back().p);
  }
  const std::vector<double> adjusted = holm_adjusted(raw);

  std::string out =
      "| paper | claim | paper's number | our model, token budget | paired difference, method - reference [95% CI] (n) | "
      "p, Holm-adjusted | verdict | source |\n"
      "| --- | --- | --- | --- | ---: | ---: | --- | --- |\n";
  std::vector<std::string> notes;
  std::size_t next = 0;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const Claim& c = claims[i];
    RowText& r = rows[i];
    std::string p_cell = "—";
    if (r.p && r.n < 3) {  // a reading, not a test: outside the family, so it cannot loosen or tighten the others
      p_cell = p_text(*r.p) + " unadjusted";
      r.verdict += " (exploratory: n < 3)";
    } else if (r.p) {
      const double holm = adjusted[next++];
      p_cell = p_text(holm);
      if (r.rejects_zero && holm >= 0.05) r.verdict += " (not after Holm)";
    }
    const std::string metric = c.metric_label.empty() ? c.metric : c.metric_label;
    out += "| " + cell(c.paper) + " | " + cell(c.claim) + " (" + cell(c.method) + " vs " + cell(c.reference) + ", " +
           (c.direction < 0 ? "lower " : "higher ") + cell(metric) + ") | " + cell(c.paper_number) + " | " + cell(r.model) +
           " | " + r.difference + " | " + p_cell + " | " + r.verdict + " | " + cell(r.source) + " |\n";
    if (!c.note.empty()) notes.push_back(std::to_string(i + 1) + ". " + c.paper + ", " + c.claim + ": " + c.note);
  }
  out += "\nEach row pairs the method's runs with the reference's by seed (same data order and initial draw); "
         "the interval is the 95% t-interval of the mean per-seed difference; the verdict reads it against the "
         "paper's direction: wholly on that side \"reproduces\", wholly on the other \"opposite\", across zero "
         "\"inconclusive\". Every row comes from one build. The p column is the paired t-test's two-sided p "
         "(mean difference 0), Holm-adjusted over the " + std::to_string(raw.size()) + " rows with a result at n >= 3; "
         "a verdict whose adjusted p is 0.05 or more does not hold jointly with the others and says \"not after "
         "Holm\". A row at n < 3 is exploratory: its p is unadjusted and it is not one of the family.\n";
  if (!notes.empty()) {
    out += "\nNotes:\n";
    for (const auto& n : notes) out += "\n" + n + "\n";
  }
  return out;
}

std::string replace_scorecard_block(const std::string& text, const std::string& block) {
  const auto begin = text.find(kBegin);
  const auto end = text.find(kEnd);
  require(begin != std::string::npos && end != std::string::npos && begin < end,
          std::string("the file lacks the lines ") + kBegin + " ... " + kEnd + " (in that order) that hold the scorecard");
  const auto after_begin = text.find('\n', begin);
  return text.substr(0, after_begin + 1) + block + text.substr(end);
}

}  // namespace moxlab
