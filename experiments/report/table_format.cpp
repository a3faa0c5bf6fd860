#include "experiments/report/table_format.h"

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

std::string join_ids(const std::vector<std::int64_t>& ids, const std::string& sep) {
  return join_map(ids, sep, [](std::int64_t id) { return std::to_string(id); });
}

// "101.23 ± 0.45 (n=2)", "101.23 (n=1)" or the dash; pm is how the format writes ±.
std::string cell_text(const TableCell& c, int digits, const std::string& pm, const std::string& dash) {
  if (c.n == 0) return dash;
  std::string s = fixed(c.mean, digits);
  if (c.n > 1) s += " " + pm + " " + fixed(c.std_err, digits);
  return s + " (n=" + std::to_string(c.n) + ")";
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
  std::vector<std::string> out{"selection: " + t.selection};
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
    if (!partial.empty()) line += "; " + join_map(partial, "; ", [](const std::string& s) { return s; });
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
    const std::string s = cell_text(c, t.metas[t.headers[h].meta].digits, pm, dash);
    cells.push_back(c.best ? bold(s) : s);
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
    return "| " + join_map(cells, " | ", [](const std::string& s) { return s; }) + " |\n";
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
  for (const auto& h : t.headers)
    for (const char* part : {" mean", " stderr", " n", " runs"}) head.push_back(h.label + part);
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
    return join_map(cells, " & ", [](const std::string& s) { return s; }) + " \\\\\n";
  };
  std::string out = "% " + one_line(t.title) + " (moxlab table)\n\\begin{table}[t]\n\\centering\n\\begin{tabular}{" +
                    std::string(t.row_keys.size(), 'l') + std::string(t.headers.size(), 'r') + "}\n\\toprule\n";
  std::vector<std::string> head;
  for (const auto& k : t.row_keys) head.push_back(latex_escape(k));
  for (const auto& h : t.headers) head.push_back(latex_escape(header_text(t, h)));
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
