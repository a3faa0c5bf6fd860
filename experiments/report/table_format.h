// Rendering of a Table as Markdown, CSV or LaTeX. Output depends only on the Table (no clock, no paths),
// so the same store gives byte-identical files.
//
//  md:    "## title", caption, a pipe table with cells "101.23 ± 0.45 (n=2)" ("101.23 (n=1)" without a
//         standard error, "—" without runs; best cells **bold**; "at chance" when every run's result is an
//         accuracy whose 95% interval contains chance, "(k of n at chance)" when some), headers
//         "label [metric, split]", then
//         "### Definitions" (label: definition) and "### Provenance" (selection, builds, the pairing rule,
//         per row: runs, seeds, config hashes, git revisions, data digests, cells with fewer runs,
//         unpaired seeds, warnings). With [compare], each column is followed by "Δ <label> vs <reference>
//         [95% CI] (n)": "-0.042 [-0.071, -0.013] (n=3) reproduces", "reference" in the reference row.
//  csv:   RFC 4180 quoting, "\n" line ends; header line, then one line per row: the row keys, per column
//         "<label> mean|stderr|n|runs" (full precision; empty when undefined; runs joined with ';') and,
//         with [compare], "<label> diff mean|diff low|diff high|diff n|verdict", then runs, seeds,
//         config_hashes, git_revs, data_digests (';'-joined, one entry per run).
//  latex: a booktabs tabular in a table float ($\pm$, \textbf for best cells, special characters
//         escaped, \caption{caption or title}); definitions and provenance follow as % comment lines.
#pragma once
#include <string>

#include "experiments/report/table_build.h"

namespace moxlab {

enum class TableFormat { markdown, csv, latex };

// "md" | "csv" | "latex"; anything else is an Error.
TableFormat parse_table_format(const std::string& name);

std::string format_table(const Table& table, TableFormat format);
std::string format_markdown(const Table& table);
std::string format_csv(const Table& table);
std::string format_latex(const Table& table);

// A cell: "101.23 ± 0.45 (n=2)", "101.23 (n=1)" or the dash (pm: how the format writes ±), marked when its
// accuracies are within the interval of chance ("at chance", "(k of n at chance)").
std::string cell_text(const TableCell& cell, int digits, const std::string& pm, const std::string& dash);

// A paired difference at n >= 2: "-0.042 [-0.071, -0.013] (n=3)" (signed, ASCII minus).
std::string interval_text(const PairedDifference& d, int digits);

// A [compare] cell: "-0.042 [-0.071, -0.013] (n=3) reproduces", "reference", or dash when not compared.
std::string comparison_text(const TableRow& row, const TableCell& cell, int digits, const std::string& dash);

}  // namespace moxlab
