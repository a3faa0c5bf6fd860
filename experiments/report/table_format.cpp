#include "experiments/report/table_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/common/error.h"

namespace moxlab {

namespace {

using TextFn = std::function<std::string(const std::string&)>;

std::string fixed(double v, int digits) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Shortest text that reads back as the same double; integers without a fraction.
std::string exact(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) return std::to_string(static_cast<long long>(v));
  return nlohmann::json(v).dump();
}

template <typename T, typename F>
std::string join_map(const std::vector<T>& items, const std::string& sep, F f) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + f(items[i]);
  return out;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  return join_map(parts, sep, [](const std::string& s) { return s; });
}

std::string join_ids(const std::vector<std::int64_t>& ids, const std::string& sep) {
  return join_map(ids, sep, [](std::int64_t id) { return std::to_string(id); });
}

std::string signed_fixed(double v, int digits) { return (v > 0 ? "+" : "") + fixed(v, digits); }

}  // namespace

std::string cell_text(const TableCell& c, int digits, const std::string& pm, const std::string& dash) {
  if (c.n == 0) return dash;
  std::string s = fixed(c.mean, digits);
  if (c.n > 1) s += " " + pm + " " + fixed(c.std_err, digits);
  s += " (n=" + std::to_string(c.n) + ")";
  if (c.at_chance == c.n) s += " at chance";
  else if (c.at_chance > 0) s += " (" + std::to_string(c.at_chance) + " of " + std::to_string(c.n) + " at chance)";
  return s;
}

std::string interval_text(const PairedDifference& d, int digits) {
  return signed_fixed(d.mean, digits) + " [" + signed_fixed(d.low, digits) + ", " + signed_fixed(d.high, digits) + "] (n=" +
         std::to_string(d.n) + ")";
}

// pm-free, so every format writes it alike (minus signs as ASCII hyphens, which LaTeX and CSV keep).
std::string comparison_text(const TableRow& row, const TableCell& c, int digits, const std::string& dash) {
  if (row.reference) return "reference";
  if (!c.comparison) return dash;
  const PairedDifference& d = c.comparison->difference;
  if (d.n == 0) return dash + " (no paired seeds)";
  if (d.n == 1) return signed_fixed(d.mean, digits) + " (n=1, no interval)";
  std::string s = interval_text(d, digits);
  if (c.comparison->verdict) s += " " + verdict_name(*c.comparison->verdict);
  return s;
}

namespace {

bool compared(const Table& t) { return !t.compare_reference.empty(); }

// "<label> vs dense [95% CI] (n)", after the format's Δ.
std::string comparison_header(const Table& t, const TableHeader& h) {
  return h.label + " vs " + t.compare_reference + " [95% CI] (n)";
}

std::string key_text(const KeyValue& k, const std::string& dash) {
  return k.kind == KeyValue::Kind::missing ? dash : k.text;
}

// "val ppl [ppl, val]"
std::string header_text(const Table& t, const TableHeader& h) {
  const ColumnMeta& m = t.metas[h.meta];
  std::string what = m.metric;
  if (!m.split.empty()) what += (what.empty() ? "" : ", ") + m.split;
  return h.label + (what.empty() ? "" : " [" + what + "]");
}

std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return s;
}

// The text lines after the table, shared by md (as list items) and LaTeX (as comments).
std::vector<std::string> definition_lines(const Table& t) {
  std::vector<std::string> out;
  for (const auto& m : t.metas)
    for (const auto& d : m.definitions) out.push_back(m.label + ": " + one_line(d));
  return out;
}

std::vector<std::string> provenance_lines(const Table& t) {
  std::vector<std::string> out{"selection: " + t.selection, "builds: " + t.builds};
  if (compared(t)) {
    out.push_back("paired differences (Δ): each row minus its reference row (" + t.row_keys[0] + "=" + t.compare_reference +
                  "), runs paired by " + t.seed_key + "; mean and 95% t-interval (t quantile at n - 1 degrees of "
                  "freedom); verdict against the direction the paper claims: interval wholly on that side "
                  "'reproduces', wholly on the other 'opposite', across zero 'inconclusive'");
    // One line per row and set of unpaired seeds; a set every compared column shares names the row alone
    // (a reference with more seeds than the row would otherwise repeat it once per column).
    for (const auto& row : t.rows) {
      if (row.reference) continue;
      if (row.compared_with.empty()) continue;
      std::vector<std::pair<std::string, std::vector<std::string>>> by_seeds;  // seeds -> column labels
      std::size_t compared_columns = 0;
      for (std::size_t h = 0; h < t.headers.size(); ++h) {
        const auto& c = row.cells[h].comparison;
        if (!c) continue;
        ++compared_columns;
        if (c->unpaired.empty()) continue;
        const std::string seeds = join(c->unpaired, ", ");
        auto group = std::find_if(by_seeds.begin(), by_seeds.end(), [&](const auto& g) { return g.first == seeds; });
        if (group == by_seeds.end()) group = by_seeds.insert(by_seeds.end(), {seeds, {}});
        group->second.push_back(t.headers[h].label);
      }
      for (const auto& [seeds, labels] : by_seeds) {
        std::string who = row_label(t, row);
        if (labels.size() < compared_columns)
          who += ", " + join(labels, ", ");
        out.push_back(who + ": " + t.seed_key + " " + seeds + " not paired (on one side only, or repeated)");
      }
    }
  }
  for (const auto& row : t.rows) {
    auto field = [&](std::string RunProvenance::*f) {
      return join_map(row.runs, ", ", [&](const RunProvenance& p) { return p.*f; });
    };
    std::string line = row_label(t, row) + ": runs " +
                       join_map(row.runs, ", ", [](const RunProvenance& p) { return std::to_string(p.run); }) +
                       "; seeds " + field(&RunProvenance::seed) + "; config " + field(&RunProvenance::config_hash) +
                       "; git " + field(&RunProvenance::git_rev) + "; data " + field(&RunProvenance::data_digest);
    std::vector<std::string> partial;
    for (std::size_t h = 0; h < t.headers.size(); ++h)
      if (row.cells[h].runs.size() < row.runs.size())
        partial.push_back(t.headers[h].label + " from runs " +
                          (row.cells[h].runs.empty() ? "none" : join_ids(row.cells[h].runs, ", ")));
    if (!partial.empty()) line += "; " + join(partial, "; ");
    out.push_back(line);
  }
  for (const auto& w : t.warnings) out.push_back("warning: " + w);
  return out;
}

// One table line: cells escaped, best cells emphasised; the row keys come first.
std::vector<std::string> body_cells(const Table& t, const TableRow& row, const TextFn& escape, const std::string& pm,
                                    const std::string& dash, const TextFn& bold) {
  std::vector<std::string> cells;
  for (const auto& k : row.keys) cells.push_back(escape(key_text(k, dash)));
  for (std::size_t h = 0; h < t.headers.size(); ++h) {
    const TableCell& c = row.cells[h];
    const int digits = t.metas[t.headers[h].meta].digits;
    const std::string s = cell_text(c, digits, pm, dash);
    cells.push_back(c.best ? bold(s) : s);
    if (compared(t)) cells.push_back(escape(comparison_text(row, c, digits, dash)));
  }
  return cells;
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : one_line(s)) out += ch == '|' ? "\\|" : std::string(1, ch);
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? "\"\"" : std::string(1, ch);
  return out + "\"";
}

std::string latex_escape(const std::string& s) {
  std::string out;
  const std::string text = one_line(s);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (text.compare(i, 3, "—") == 0) {
      out += "---";
      i += 2;
    } else if (std::string("_%&#${}").find(ch) != std::string::npos) {
      out += std::string("\\") + ch;
    } else if (ch == '~') {
      out += "\\textasciitilde{}";
    } else if (ch == '^') {
      out += "\\textasciicircum{}";
    } else if (ch == '\\') {
      out += "\\textbackslash{}";
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

TableFormat parse_table_format(const std::string& name) {
  if (name == "md") return TableFormat::markdown;
  if (name == "csv") return TableFormat::csv;
  if (name == "latex") return TableFormat::latex;
  throw Error("unknown table format '" + name + "' (expected md, csv or latex)");
}

std::string format_table(const Table& table, TableFormat format) {
  switch (format) {
    case TableFormat::markdown: return format_markdown(table);
    case TableFormat::csv: return format_csv(table);
    case TableFormat::latex: return format_latex(table);
  }
  return "";
}

std::string format_markdown(const Table& t) {
  auto line = [](const std::vector<std::string>& cells) {
    return "| " + join(cells, " | ") + " |\n";
  };
  std::string out = "## " + md_escape(t.title) + "\n\n";
  if (!t.caption.empty()) out += one_line(t.caption) + "\n\n";
  std::vector<std::string> head, rule;
  for (const auto& k : t.row_keys) {
    head.push_back(md_escape(k));
    rule.push_back("---");
  }
  for (const auto& h : t.headers) {
    head.push_back(md_escape(header_text(t, h)));
    rule.push_back("---:");
    if (compared(t)) {
      head.push_back("Δ " + md_escape(comparison_header(t, h)));
      rule.push_back("---:");
    }
  }
  out += line(head) + line(rule);
  for (const auto& row : t.rows)
    out += line(body_cells(t, row, md_escape, "±", "—", [](const std::string& s) { return "**" + s + "**"; }));
  const auto defs = definition_lines(t);
  if (!defs.empty()) {
    out += "\n### Definitions\n\n";
    for (const auto& d : defs) out += "- " + d + "\n";
  }
  out += "\n### Provenance\n\n";
  for (const auto& p : provenance_lines(t)) out += "- " + p + "\n";
  return out;
}

std::string format_csv(const Table& t) {
  auto line = [](const std::vector<std::string>& fields) {
    return join_map(fields, ",", csv_field) + "\n";
  };
  std::vector<std::string> head = t.row_keys;
  for (const auto& h : t.headers) {
    for (const char* part : {" mean", " stderr", " n", " runs"}) head.push_back(h.label + part);
    if (compared(t))
      for (const char* part : {" diff mean", " diff low", " diff high", " diff n", " verdict"}) head.push_back(h.label + part);
  }
  for (const char* p : {"runs", "seeds", "config_hashes", "git_revs", "data_digests"}) head.push_back(p);
  std::string out = line(head);
  for (const auto& row : t.rows) {
    std::vector<std::string> f;
    for (const auto& k : row.keys) f.push_back(key_text(k, ""));
    for (const auto& c : row.cells) {
      f.push_back(c.n > 0 ? exact(c.mean) : "");
      f.push_back(c.n > 1 ? exact(c.std_err) : "");
      f.push_back(std::to_string(c.n));
      f.push_back(join_ids(c.runs, ";"));
      if (!compared(t)) continue;
      const PairedDifference d = c.comparison ? c.comparison->difference : PairedDifference{};
      f.push_back(d.n > 0 ? exact(d.mean) : "");
      f.push_back(d.n > 1 ? exact(d.low) : "");
      f.push_back(d.n > 1 ? exact(d.high) : "");
      f.push_back(row.reference ? "" : std::to_string(d.n));
      f.push_back(row.reference ? "reference" : c.comparison && c.comparison->verdict ? verdict_name(*c.comparison->verdict) : "");
    }
    f.push_back(join_map(row.runs, ";", [](const RunProvenance& p) { return std::to_string(p.run); }));
    for (auto field : {&RunProvenance::seed, &RunProvenance::config_hash, &RunProvenance::git_rev,
                       &RunProvenance::data_digest})
      f.push_back(join_map(row.runs, ";", [&](const RunProvenance& p) { return p.*field; }));
    out += line(f);
  }
  return out;
}

std::string format_latex(const Table& t) {
  auto line = [](const std::vector<std::string>& cells) {
    return join(cells, " & ") + " \\\\\n";
  };
  const std::size_t ncols = t.headers.size() * (compared(t) ? 2 : 1);
  std::string out = "% " + one_line(t.title) + " (moxlab table)\n\\begin{table}[t]\n\\centering\n\\begin{tabular}{" +
                    std::string(t.row_keys.size(), 'l') + std::string(ncols, 'r') + "}\n\\toprule\n";
  std::vector<std::string> head;
  for (const auto& k : t.row_keys) head.push_back(latex_escape(k));
  for (const auto& h : t.headers) {
    head.push_back(latex_escape(header_text(t, h)));
    if (compared(t)) head.push_back("$\\Delta$ " + latex_escape(comparison_header(t, h)));
  }
  out += line(head) + "\\midrule\n";
  for (const auto& row : t.rows)
    out += line(body_cells(t, row, latex_escape, "$\\pm$", "---",
                           [](const std::string& s) { return "\\textbf{" + s + "}"; }));
  out += "\\bottomrule\n\\end{tabular}\n\\caption{" + latex_escape(t.caption.empty() ? t.title : t.caption) +
         "}\n\\end{table}\n";
  const auto defs = definition_lines(t);
  if (!defs.empty()) {
    out += "% Definitions:\n";
    for (const auto& d : defs) out += "%   " + d + "\n";
  }
  out += "% Provenance:\n";
  for (const auto& p : provenance_lines(t)) out += "%   " + one_line(p) + "\n";
  return out;
}

}  // namespace moxlab
