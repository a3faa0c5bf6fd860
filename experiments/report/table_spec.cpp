#include "experiments/report/table_spec.h"

#include <algorithm>
#include <cctype>

#include <toml++/toml.h>

#include "core/common/atomic_file.h"
#include "core/common/error.h"

namespace moxlab {

namespace {

// Reads one TOML table of the spec; every failure names the dotted key and the file.
class Reader {
 public:
  Reader(const toml::table& table, std::string prefix, const std::string& origin)
      : table_(table), prefix_(std::move(prefix)), origin_(origin) {}

  std::string key(const std::string& k) const { return prefix_.empty() ? k : prefix_ + "." + k; }

  [[noreturn]] void fail(const std::string& k, const std::string& what) const {
    throw Error("table spec " + origin_ + ": '" + key(k) + "' " + what);
  }

  void only(std::initializer_list<const char*> allowed) const {
    for (const auto& [k, node] : table_) {
      const std::string name(k.str());
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return name == a; }))
        throw Error("table spec " + origin_ + ": unknown key '" + key(name) + "'");
    }
  }

  const toml::node* node(const std::string& k) const { return table_.get(k); }

  std::optional<Reader> table(const std::string& k) const {
    const toml::node* n = node(k);
    if (!n) return std::nullopt;
    if (!n->is_table()) fail(k, "must be a table");
    return Reader(*n->as_table(), key(k), origin_);
  }

  std::optional<std::string> text(const std::string& k, bool allow_empty = false) const {
    const toml::node* n = node(k);
    if (!n) return std::nullopt;
    auto s = n->value_exact<std::string>();
    if (!s) fail(k, "must be a string");
    if (s->empty() && !allow_empty) fail(k, "must not be empty");
    return s;
  }

  std::string required_text(const std::string& k) const {
    auto s = text(k);
    if (!s) fail(k, "is required");
    return *s;
  }

  std::optional<std::int64_t> integer(const std::string& k) const {
    const toml::node* n = node(k);
    if (!n) return std::nullopt;
    auto i = n->value_exact<std::int64_t>();
    if (!i) fail(k, "must be an integer");
    return i;
  }

  template <typename T>
  std::vector<T> list(const std::string& k, const char* what) const {
    std::vector<T> out;
    const toml::node* n = node(k);
    if (!n) return out;
    const toml::array* arr = n->as_array();
    if (!arr) fail(k, std::string("must be an array of ") + what);
    for (const auto& el : *arr) {
      auto v = el.value_exact<T>();
      if (!v) fail(k, std::string("must be an array of ") + what);
      out.push_back(*v);
    }
    return out;
  }

  const toml::table& raw() const { return table_; }

 private:
  const toml::table& table_;
  std::string prefix_;
  const std::string& origin_;
};

nlohmann::json scalar_json(const toml::node& n) {
  if (auto i = n.value_exact<std::int64_t>()) return *i;
  if (auto d = n.value_exact<double>()) return *d;
  if (auto b = n.value_exact<bool>()) return *b;
  if (auto s = n.value_exact<std::string>()) return *s;
  return nullptr;
}

// where = { "model.dim" = 192 } and where = { model = { dim = 192 } } both mean config key model.dim.
void read_where(const Reader& r, const std::string& prefix, std::vector<std::pair<std::string, nlohmann::json>>& out) {
  for (const auto& [k, node] : r.raw()) {
    const std::string name(k.str());
    const std::string dotted = prefix.empty() ? name : prefix + "." + name;
    if (node.is_table()) {
      read_where(*r.table(name), dotted, out);
      continue;
    }
    nlohmann::json v;
    if (const toml::array* list = node.as_array()) {  // any of these values
      v = nlohmann::json::array();
      for (const auto& item : *list) v.push_back(scalar_json(item));
      if (v.empty() || std::any_of(v.begin(), v.end(), [](const nlohmann::json& x) { return x.is_null(); }))
        r.fail(name, "must be a non-empty list of strings, numbers or booleans");
    } else {
      v = scalar_json(node);
      if (v.is_null()) r.fail(name, "must be a string, number or boolean, or a list of them");
    }
    out.emplace_back(dotted, v);
  }
}

TableSelect read_select(const Reader& r) {
  r.only({"sweep", "kind", "status", "runs", "where"});
  TableSelect s;
  if (const toml::node* n = r.node("sweep")) {
    auto one = [&](const toml::node& v) {
      auto id = v.value_exact<std::int64_t>();
      auto name = v.value_exact<std::string>();
      if (!id && (!name || name->empty())) r.fail("sweep", "must be a sweep name or id, or a list of them");
      s.sweeps.push_back(id ? SweepRef{"", *id} : SweepRef{*name, std::nullopt});
    };
    if (const toml::array* arr = n->as_array()) {
      if (arr->empty()) r.fail("sweep", "must be a sweep name or id, or a list of them");
      for (const auto& v : *arr) one(v);
    } else {
      one(*n);
    }
  }
  s.kind = r.text("kind");
  if (r.node("status")) {
    s.status.clear();
    for (const auto& word : r.list<std::string>("status", "status words")) {
      try {
        s.status.push_back(parse_run_status(word));
      } catch (const Error& e) {
        r.fail("status", std::string("has an ") + e.what());
      }
    }
    if (s.status.empty()) r.fail("status", "must not be empty");
  }
  s.runs = r.list<std::int64_t>("runs", "run ids");
  if (auto where = r.table("where")) read_where(*where, "", s.where);
  return s;
}

TableLayout read_layout(const Reader& r) {
  r.only({"rows", "columns_by", "seed_key", "order"});
  TableLayout l;
  l.rows = r.list<std::string>("rows", "strings");
  if (l.rows.empty()) r.fail("rows", "must list at least one key");
  for (std::size_t i = 0; i < l.rows.size(); ++i) {
    if (l.rows[i].empty()) r.fail("rows", "must not contain empty keys");
    if (std::find(l.rows.begin(), l.rows.begin() + i, l.rows[i]) != l.rows.begin() + i)
      r.fail("rows", "lists '" + l.rows[i] + "' twice");
  }
  l.columns_by = r.text("columns_by").value_or("");
  if (std::find(l.rows.begin(), l.rows.end(), l.columns_by) != l.rows.end())
    r.fail("columns_by", "is also a row key");
  l.seed_key = r.text("seed_key").value_or(l.seed_key);
  l.order = r.list<std::string>("order", "strings");
  return l;
}

// One [[column]], or several sharing digits/better/paper when metric (and label) are lists.
std::vector<TableColumn> read_columns(const Reader& r) {
  r.only({"metric", "label", "digits", "better", "paper"});
  TableColumn c;
  if (auto d = r.integer("digits")) {
    if (*d < 0 || *d > 15) r.fail("digits", "must be between 0 and 15");
    c.digits = static_cast<int>(*d);
  }
  if (auto b = r.text("better")) {
    if (*b == "lower") c.better = Better::lower;
    else if (*b == "higher") c.better = Better::higher;
    else r.fail("better", "must be \"lower\" or \"higher\", got \"" + *b + "\"");
  }
  c.paper = c.better == Better::lower ? -1 : c.better == Better::higher ? 1 : 0;
  if (auto p = r.text("paper")) {
    if (*p == "lower") c.paper = -1;
    else if (*p == "higher") c.paper = 1;
    else if (*p == "none") c.paper = 0;
    else r.fail("paper", "must be \"lower\", \"higher\" or \"none\", got \"" + *p + "\"");
  }
  const toml::node* metric = r.node("metric");
  if (!metric) r.fail("metric", "is required");
  const bool many = metric->is_array();
  const std::vector<std::string> metrics = many ? r.list<std::string>("metric", "strings")
                                                : std::vector<std::string>{r.required_text("metric")};
  if (metrics.empty()) r.fail("metric", "must not be empty");
  std::vector<std::string> labels;
  if (r.node("label")) {
    labels = many ? r.list<std::string>("label", "strings") : std::vector<std::string>{*r.text("label")};
    if (labels.size() != metrics.size())
      r.fail("label", "must list one label per metric (" + std::to_string(metrics.size()) + ")");
  }
  std::vector<TableColumn> out;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].empty()) r.fail("metric", "must not contain empty metrics");
    try {
      metric_placeholders(metrics[i]);
    } catch (const Error& e) {
      r.fail("metric", e.what());
    }
    c.metric = metrics[i];
    c.label = labels.empty() ? metrics[i] : labels[i];
    out.push_back(c);
  }
  return out;
}

// Each column must use exactly the layout's placeholders. source[i] is the [[column]] (from 1) that
// column i came from.
void check_placeholders(const TableSpec& spec, const std::vector<std::size_t>& source) {
  const std::vector<std::string> used = spec.placeholders();
  for (std::size_t i = 0; i < spec.columns.size(); ++i) {
    const std::string where = "table spec " + spec.origin + ": 'column[" + std::to_string(source[i]) + "].metric' ";
    for (const auto& p : metric_placeholders(spec.columns[i].metric))
      require(std::find(used.begin(), used.end(), p) != used.end(),
              where + "placeholder {" + p + "} is not a layout.rows or layout.columns_by key");
    const auto own = metric_placeholders(spec.columns[i].metric);
    for (const auto& p : used)
      require(std::find(own.begin(), own.end(), p) != own.end(), where + "lacks placeholder {" + p + "} of the layout");
  }
}

}  // namespace

std::vector<std::string> TableSpec::placeholders() const {
  std::vector<std::string> out;
  std::vector<std::string> keys = layout.rows;
  if (!layout.columns_by.empty()) keys.push_back(layout.columns_by);
  for (const auto& k : keys)
    for (const auto& c : columns) {
      const auto names = metric_placeholders(c.metric);
      if (std::find(names.begin(), names.end(), k) != names.end()) {
        out.push_back(k);
        break;
      }
    }
  return out;
}

bool TableSpec::is_placeholder(const std::string& key) const {
  const auto p = placeholders();
  return std::find(p.begin(), p.end(), key) != p.end();
}

std::vector<std::string> metric_placeholders(const std::string& pattern) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '}') throw Error("has an unmatched '}' in \"" + pattern + "\"");
    if (pattern[i] != '{') continue;
    const std::size_t close = pattern.find('}', i);
    if (close == std::string::npos) throw Error("has an unmatched '{' in \"" + pattern + "\"");
    const std::string name = pattern.substr(i + 1, close - i - 1);
    const bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                    std::all_of(name.begin(), name.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
    if (!ok) throw Error("has a bad placeholder {" + name + "} in \"" + pattern + "\" (expected {identifier})");
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    i = close;
  }
  return out;
}

TableSpec parse_table_spec(const std::string& toml_text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& err) {
    throw Error("table spec " + origin + ":" + std::to_string(err.source().begin.line) + ": " +
                std::string(err.description()));
  }
  TableSpec spec;
  spec.origin = origin;
  const Reader r(root, "", spec.origin);
  r.only({"title", "caption", "select", "layout", "column", "compare"});
  spec.title = r.required_text("title");
  spec.caption = r.text("caption", true).value_or("");
  if (auto s = r.table("select")) spec.select = read_select(*s);
  auto layout = r.table("layout");
  if (!layout) r.fail("layout", "is required");
  spec.layout = read_layout(*layout);

  const toml::node* cols = r.node("column");
  const toml::array* arr = cols ? cols->as_array() : nullptr;
  if (!cols) r.fail("column", "is required ([[column]] with a metric)");
  if (!arr || !arr->is_array_of_tables()) r.fail("column", "must be an array of tables ([[column]])");
  std::vector<std::size_t> source;
  for (std::size_t i = 0; i < arr->size(); ++i)
    for (auto& c : read_columns(Reader(*arr->get(i)->as_table(), "column[" + std::to_string(i + 1) + "]", spec.origin))) {
      spec.columns.push_back(std::move(c));
      source.push_back(i + 1);
    }
  check_placeholders(spec, source);
  if (auto compare = r.table("compare")) {
    compare->only({"reference"});
    spec.compare_reference = compare->required_text("reference");
  }
  return spec;
}

TableSpec load_table_spec(const std::string& path) {
  if (!file_exists(path)) throw Error("cannot open table spec " + path);
  return parse_table_spec(read_file(path), path);
}

SweepRef parse_sweep_ref(const std::string& text) {
  require(!text.empty(), "--sweep must name a sweep (name or id)");
  if (std::all_of(text.begin(), text.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
    require(text.size() <= 18, "--sweep id " + text + " is out of range");  // 18 digits always fit an int64
    return SweepRef{"", std::stoll(text)};
  }
  return SweepRef{text, std::nullopt};
}

std::vector<SweepRef> parse_sweep_refs(const std::string& text) {
  std::vector<SweepRef> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));  // "a, b" reads as "a,b"
    item.erase(item.find_last_not_of(' ') + 1);
    out.push_back(parse_sweep_ref(item));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace moxlab
