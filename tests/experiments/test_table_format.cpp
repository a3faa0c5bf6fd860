// experiments/report/table_format: exact Markdown and CSV of a small table, LaTeX escaping and ±, and
// byte-identical output for the same store contents.
#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "experiments/report/table_format.h"
#include "tests/experiments/table_test_support.h"

using namespace moxlab;
using moxlab::testing::kPplMeta;
using moxlab::testing::lr_config;
using moxlab::testing::TableStore;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const char* kSpec = R"(
title = "Tiny: lr"
caption = "Validation perplexity after 100 steps."
[layout]
rows = ["model.dim", "train.lr"]
[[column]]
metric = "ppl/val/all"
label = "val ppl"
digits = 2
better = "lower"
[[column]]
metric = "params/active"
label = "active params"
)";

const char* kCountMeta = R"({"metric":"count","definition":"non-embedding parameters"})";

// Runs 1 and 2 pool into one row (10 and 12: 11 ± 1); run 3 has ppl only.
void fill(TableStore& s) {
  s.add_run(lr_config(64, 0.001, 1), {{"ppl/val/all", 10, kPplMeta}, {"params/active", 1000, kCountMeta}});
  s.add_run(lr_config(64, 0.001, 2), {{"ppl/val/all", 12, kPplMeta}, {"params/active", 1000, kCountMeta}});
  s.add_run(lr_config(64, 0.01, 1), {{"ppl/val/all", 20.126, kPplMeta}});
}

}  // namespace

TEST_CASE("table format: Markdown", "[table][table_format]") {
  TableStore s;
  fill(s);
  CHECK(format_table(s.build(kSpec), parse_table_format("md")) == R"(## Tiny: lr

Validation perplexity after 100 steps.

| model.dim | train.lr | val ppl [ppl, val] | active params [count] |
| --- | --- | ---: | ---: |
| 64 | 0.001 | **11.00 ± 1.00 (n=2)** | 1000 ± 0 (n=2) |
| 64 | 0.01 | 20.13 (n=1) | — |

### Definitions

- val ppl: exp(mean NLL)
- active params: non-embedding parameters

### Provenance

- selection: 3 runs (1, 2, 3) selected by status finished
- builds: one build: 0123456789abcdef0123456789abcdef01234567
- model.dim=64, train.lr=0.001: runs 1, 2; seeds 1, 2; config cfg101234567, cfg201234567; git 0123456789ab, 0123456789ab; data feedbeef0011, feedbeef0011
- model.dim=64, train.lr=0.01: runs 3; seeds 1; config cfg301234567; git 0123456789ab; data feedbeef0011; active params from runs none
)");
}

TEST_CASE("table format: CSV", "[table][table_format]") {
  TableStore s;
  fill(s);
  CHECK(format_table(s.build(kSpec), parse_table_format("csv")) ==
        "model.dim,train.lr,val ppl mean,val ppl stderr,val ppl n,val ppl runs,active params mean,active params stderr,"
        "active params n,active params runs,runs,seeds,config_hashes,git_revs,data_digests\n"
        "64,0.001,11,1,2,1;2,1000,0,2,1;2,1;2,1;2,cfg101234567;cfg201234567,"
        "0123456789ab;0123456789ab,feedbeef0011;feedbeef0011\n"
        "64,0.01,20.126,,1,3,,,0,,3,1,cfg301234567,0123456789ab,feedbeef0011\n");

  // RFC 4180: fields with commas, quotes or line breaks are quoted, quotes doubled.
  const std::string quoted = format_csv(s.build(R"(
title = "q"
[layout]
rows = ["run.name"]
[[column]]
metric = "params/active"
label = "active, \"non-emb\""
)"));
  CHECK_THAT(quoted, StartsWith("run.name,\"active, \"\"non-emb\"\" mean\",\"active, \"\"non-emb\"\" stderr\""));
}

TEST_CASE("table format: LaTeX escapes special characters and compiles with comments after", "[table][table_format]") {
  TableStore s;
  fill(s);
  s.add_run(lr_config(64, 0.1, 1, "a_b"), {{"ppl/val/all", 5, kPplMeta}});
  const std::string tex = format_table(s.build(R"(
title = "lr_sweep & 100% #1 {x} ~y^2 \\ $z"
[layout]
rows = ["run.name", "train.lr"]
[[column]]
metric = "ppl/val/all"
label = "val_ppl"
digits = 1
better = "lower"
)"),
                                       parse_table_format("latex"));
  CHECK_THAT(tex, Contains("\\begin{tabular}{llr}\n\\toprule\n"));
  CHECK_THAT(tex, Contains("run.name & train.lr & val\\_ppl [ppl, val] \\\\\n\\midrule\n"));
  CHECK_THAT(tex, Contains("dense & 0.001 & 11.0 $\\pm$ 1.0 (n=2) \\\\\n"));
  CHECK_THAT(tex, Contains("a\\_b & 0.1 & \\textbf{5.0 (n=1)} \\\\\n"));
  CHECK_THAT(tex, Contains("\\caption{lr\\_sweep \\& 100\\% \\#1 \\{x\\} \\textasciitilde{}y\\textasciicircum{}2 "
                           "\\textbackslash{} \\$z}\n\\end{table}\n"));
  // Everything after the float is a comment, so the file compiles as it is.
  const std::string tail = tex.substr(tex.find("\\end{table}\n") + 12);
  CHECK_THAT(tail, StartsWith("% Definitions:\n%   val_ppl: exp(mean NLL)\n% Provenance:\n"));
  for (std::size_t pos = 0; pos < tail.size(); pos = tail.find('\n', pos) + 1) CHECK(tail[pos] == '%');
}

TEST_CASE("table format: same store contents give byte-identical output", "[table][table_format]") {
  TableStore a, b;  // separate stores, created at different times
  fill(a);
  fill(b);
  for (const char* f : {"md", "csv", "latex"}) {
    const TableFormat format = parse_table_format(f);
    const std::string first = format_table(a.build(kSpec), format);
    CHECK(format_table(a.build(kSpec), format) == first);
    CHECK(format_table(b.build(kSpec), format) == first);
  }
  CHECK_THROWS_WITH(parse_table_format("html"), "unknown table format 'html' (expected md, csv or latex)");
}

TEST_CASE("table format: accuracies within the interval of chance are marked", "[table][table_format]") {
  TableStore s;
  const char* at = R"({"metric":"acc","at_chance":true})";
  const char* above = R"({"metric":"acc","at_chance":false})";
  s.add_run(lr_config(64, 0.001, 1), {{"piqa/acc", 0.50, at}});
  s.add_run(lr_config(64, 0.001, 2), {{"piqa/acc", 0.52, at}});
  s.add_run(lr_config(64, 0.01, 1), {{"piqa/acc", 0.60, above}});
  s.add_run(lr_config(64, 0.01, 2), {{"piqa/acc", 0.52, at}});
  const std::string md = format_markdown(s.build("title = \"c\"\n[layout]\nrows = [\"train.lr\"]\n[[column]]\nmetric = \"piqa/acc\"\ndigits = 2\n"));
  CHECK_THAT(md, Contains("| 0.001 | 0.51 ± 0.01 (n=2) at chance |"));
  CHECK_THAT(md, Contains("| 0.01 | 0.56 ± 0.04 (n=2) (1 of 2 at chance) |"));
}
