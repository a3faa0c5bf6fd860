// `moxlab table` [compare]: paired differences against a reference row, by seed, with hand-computed 95%
// t-intervals at n = 3 and n = 2 and their verdicts; unpaired seeds; how every format writes them; and
// the one-build rule (mixed revisions and dirty trees refused unless allowed).
#include <catch2/catch.hpp>

#include <cmath>

#include "core/common/error.h"
#include "experiments/report/table_format.h"
#include "tests/experiments/table_test_support.h"

using namespace moxlab;
using moxlab::testing::TableStore;
using Catch::Matchers::Contains;

namespace {

const char* kLossMeta = R"({"metric":"loss","split":"val","definition":"mean NLL in nats"})";

nlohmann::json variant_config(const std::string& variant, int seed, int dim = 64) {
  return {{"run.name", variant}, {"run.variant", variant}, {"model.dim", dim}, {"train.seed", seed}};
}

void add(TableStore& s, const std::string& variant, const std::vector<std::pair<int, double>>& seed_losses, int dim = 64) {
  for (const auto& [seed, loss] : seed_losses) s.add_run(variant_config(variant, seed, dim), {{"loss/val/all", loss, kLossMeta}});
}

// dense (reference) seeds 1-3; mohd: d = (-0.10, -0.05, -0.15); moh: d = (-0.20, -0.15, -0.20);
// worse: d = +0.2 each; x2: seeds 1, 2 only, d = (-0.05, -0.10).
void fill(TableStore& s) {
  add(s, "dense", {{1, 4.00}, {2, 4.10}, {3, 3.90}});
  add(s, "mohd", {{1, 3.90}, {2, 4.05}, {3, 3.75}});
  add(s, "moh", {{1, 3.80}, {2, 3.95}, {3, 3.70}});
  add(s, "worse", {{1, 4.20}, {2, 4.30}, {3, 4.10}});
  add(s, "x2", {{1, 3.95}, {2, 4.00}});
}

const char* kSpec = R"(
title = "paired"
[layout]
rows = ["run.variant"]
order = ["dense", "mohd", "moh", "worse", "x2"]
[[column]]
metric = "loss/val/all"
label = "val loss"
digits = 3
better = "lower"
[compare]
reference = "dense"
)";

const CellComparison& comparison(const Table& t, std::size_t row) {
  REQUIRE(t.rows[row].cells[0].comparison.has_value());
  return *t.rows[row].cells[0].comparison;
}

}  // namespace

TEST_CASE("table compare: hand-computed paired intervals at n = 3 and n = 2, and their verdicts", "[table][table_compare]") {
  TableStore s;
  fill(s);
  const Table t = s.build(kSpec);
  REQUIRE(t.rows.size() == 5);
  CHECK(t.rows[0].reference);
  CHECK_FALSE(t.rows[0].cells[0].comparison.has_value());

  // mohd: mean -0.10, sd 0.05, half-width t(0.975, 2) 0.05 / sqrt 3 = 4.302653 * 0.028868 = 0.124207.
  const auto& mohd = comparison(t, 1);
  CHECK(mohd.difference.n == 3);
  CHECK(mohd.difference.mean == Approx(-0.10));
  CHECK(mohd.difference.sd == Approx(0.05));
  CHECK(mohd.difference.low == Approx(-0.224207).epsilon(1e-5));
  CHECK(mohd.difference.high == Approx(0.024207).epsilon(1e-4));
  CHECK(mohd.verdict == Verdict::inconclusive);
  CHECK(mohd.unpaired.empty());
  CHECK(t.rows[1].compared_with == "run.variant=dense");

  // moh: mean -0.183333, sd 0.028868, half-width 4.302653 * 0.028868 / sqrt 3 = 0.071711.
  const auto& moh = comparison(t, 2);
  CHECK(moh.difference.mean == Approx(-0.183333).epsilon(1e-5));
  CHECK(moh.difference.low == Approx(-0.255044).epsilon(1e-5));
  CHECK(moh.difference.high == Approx(-0.111622).epsilon(1e-5));
  CHECK(moh.verdict == Verdict::reproduces);

  // worse: every difference +0.2, sd 0: the interval is the point, on the other side.
  const auto& worse = comparison(t, 3);
  CHECK(worse.difference.sd == Approx(0).margin(1e-12));
  CHECK(worse.verdict == Verdict::opposite);

  // x2, n = 2: mean -0.075, sd 0.035355, half-width t(0.975, 1) 0.035355 / sqrt 2 = 12.706205 * 0.025 = 0.317655;
  // seed 3 has no partner.
  const auto& x2 = comparison(t, 4);
  CHECK(x2.difference.n == 2);
  CHECK(x2.difference.mean == Approx(-0.075));
  CHECK(x2.difference.low == Approx(-0.392655).epsilon(1e-5));
  CHECK(x2.difference.high == Approx(0.242655).epsilon(1e-5));
  CHECK(x2.verdict == Verdict::inconclusive);
  CHECK(x2.unpaired == std::vector<std::string>{"3"});
}

TEST_CASE("table compare: the paper's direction sets the verdict, 'none' gives the interval alone", "[table][table_compare]") {
  TableStore s;
  fill(s);
  std::string spec = kSpec;
  spec.replace(spec.find("better = \"lower\""), 16, "paper = \"higher\"");
  CHECK(comparison(s.build(spec), 2).verdict == Verdict::opposite);  // moh lowers the loss; the claim said raises
  CHECK(comparison(s.build(spec), 3).verdict == Verdict::reproduces);
  spec.replace(spec.find("paper = \"higher\""), 16, "paper = \"none\"  ");
  const Table t = s.build(spec);
  CHECK_FALSE(comparison(t, 2).verdict.has_value());
  CHECK(comparison(t, 2).difference.n == 3);
}

TEST_CASE("table compare: one paired seed gives the difference without an interval, none gives a dash",
          "[table][table_compare]") {
  TableStore s;
  add(s, "dense", {{1, 4.0}, {2, 4.1}});
  add(s, "one", {{2, 3.9}, {5, 3.0}});
  add(s, "none", {{7, 3.0}});
  const Table t = s.build(kSpec);
  const std::string md = format_markdown(t);
  CHECK_THAT(md, Contains("| one | 3.450 ± 0.450 (n=2) | -0.200 (n=1, no interval) |"));
  CHECK_THAT(md, Contains("| none | **3.000 (n=1)** | — (no paired seeds) |"));
  CHECK_THAT(md, Contains("- run.variant=one: train.seed 1, 5 not paired (on one side only, or repeated)"));
}

TEST_CASE("table compare: unpaired seeds are named once per row, and per column only where the columns differ",
          "[table][table_compare]") {
  const char* kl_meta = R"({"metric":"kl","split":"val","definition":"KL in nats"})";
  TableStore s;
  for (int seed : {1, 2, 3, 4, 5})  // the reference has seeds 4 and 5 that no other row has
    s.add_run(variant_config("dense", seed), {{"loss/val/all", 4.0, kLossMeta}, {"kl/val/all", 0.0, kl_meta}});
  for (int seed : {1, 2, 3})
    s.add_run(variant_config("both", seed), {{"loss/val/all", 4.5, kLossMeta}, {"kl/val/all", 0.5, kl_meta}});
  for (int seed : {1, 2, 3})  // seed 3 has no KL
    s.add_run(variant_config("split", seed), seed == 3 ? std::vector<std::tuple<std::string, double, std::string>>{
                                                            {"loss/val/all", 4.4, kLossMeta}}
                                                      : std::vector<std::tuple<std::string, double, std::string>>{
                                                            {"loss/val/all", 4.4, kLossMeta}, {"kl/val/all", 0.4, kl_meta}});
  const Table t = s.build(R"(
title = "two metrics"
[layout]
rows = ["run.variant"]
order = ["dense", "both", "split"]
[[column]]
metric = "loss/val/all"
label = "val loss"
better = "lower"
[[column]]
metric = "kl/val/all"
label = "KL"
better = "lower"
[compare]
reference = "dense"
)");
  const std::string md = format_markdown(t);
  CHECK_THAT(md, Contains("- run.variant=both: train.seed 4, 5 not paired (on one side only, or repeated)"));
  CHECK_FALSE(md.find("run.variant=both, val loss") != std::string::npos);
  CHECK_THAT(md, Contains("- run.variant=split, val loss: train.seed 4, 5 not paired"));
  CHECK_THAT(md, Contains("- run.variant=split, KL: train.seed 3, 4, 5 not paired"));
}

TEST_CASE("table compare: Markdown, CSV and LaTeX carry the difference, interval, n and verdict", "[table][table_compare]") {
  TableStore s;
  fill(s);
  const Table t = s.build(kSpec);
  const std::string md = format_markdown(t);
  CHECK_THAT(md, Contains("| run.variant | val loss [loss, val] | Δ val loss vs dense [95% CI] (n) |\n| --- | ---: | ---: |\n"));
  CHECK_THAT(md, Contains("| dense | 4.000 ± 0.058 (n=3) | reference |\n"));
  CHECK_THAT(md, Contains("| mohd | 3.900 ± 0.087 (n=3) | -0.100 [-0.224, +0.024] (n=3) inconclusive |\n"));
  CHECK_THAT(md, Contains("| **3.817 ± 0.073 (n=3)** | -0.183 [-0.255, -0.112] (n=3) reproduces |\n"));
  CHECK_THAT(md, Contains("| worse | 4.200 ± 0.058 (n=3) | +0.200 [+0.200, +0.200] (n=3) opposite |\n"));
  CHECK_THAT(md, Contains("- paired differences (Δ): each row minus its reference row (run.variant=dense), runs paired by train.seed"));
  CHECK_THAT(md, Contains("- run.variant=x2: train.seed 3 not paired"));

  const std::string csv = format_csv(t);
  CHECK_THAT(csv, Contains("val loss runs,val loss diff mean,val loss diff low,val loss diff high,val loss diff n,val loss verdict,runs"));
  CHECK_THAT(csv, Contains(",reference,1;2;3,"));  // the dense row
  CHECK_THAT(csv, Contains(",3,inconclusive,"));    // mohd
  const std::string tex = format_latex(t);
  CHECK_THAT(tex, Contains("\\begin{tabular}{lrr}"));
  CHECK_THAT(tex, Contains("$\\Delta$ val loss vs dense [95\\% CI] (n)"));
  CHECK_THAT(tex, Contains("moh & \\textbf{3.817 $\\pm$ 0.073 (n=3)} & -0.183 [-0.255, -0.112] (n=3) reproduces \\\\\n"));
}

TEST_CASE("table compare: with several row keys each row pairs with the reference of its own other keys",
          "[table][table_compare]") {
  TableStore s;
  add(s, "dense", {{1, 4.0}, {2, 4.2}}, 64);
  add(s, "dense", {{1, 3.0}, {2, 3.2}}, 128);
  add(s, "mohd", {{1, 3.9}, {2, 4.0}}, 64);
  add(s, "mohd", {{1, 3.1}, {2, 3.3}}, 128);
  std::string spec = kSpec;
  spec.replace(spec.find("rows = [\"run.variant\"]"), 22, "rows = [\"run.variant\", \"model.dim\"]");
  const Table t = s.build(spec);
  REQUIRE(t.rows.size() == 4);
  for (const auto& row : t.rows) {
    if (row.reference) continue;
    const double want = row.keys[1].text == "64" ? -0.15 : 0.1;
    CHECK(row.cells[0].comparison->difference.mean == Approx(want));
    CHECK(row.compared_with == "run.variant=dense, model.dim=" + row.keys[1].text);
  }
}

TEST_CASE("table compare: spec errors name the problem", "[table][table_compare]") {
  TableStore s;
  fill(s);
  std::string spec = kSpec;
  spec.replace(spec.find("reference = \"dense\""), 19, "reference = \"dens\" ");
  CHECK_THROWS_WITH(s.build(spec), Contains("compare.reference 'dens' is not a value of run.variant"));
  CHECK_THROWS_WITH(s.build(std::string(kSpec) + "scale = 2\n"), Contains("unknown key 'compare.scale'"));
  std::string empty = kSpec;
  empty.replace(empty.find("reference = \"dense\""), 19, "");
  CHECK_THROWS_WITH(parse_table_spec(empty, "s.toml"), Contains("'compare.reference' is required"));
  std::string bad = kSpec;
  bad.replace(bad.find("better = \"lower\""), 16, "paper = \"down\"  ");
  CHECK_THROWS_WITH(parse_table_spec(bad, "s.toml"), Contains("'column[1].paper' must be \"lower\", \"higher\" or \"none\""));
}

TEST_CASE("table builds: runs of two revisions or of a dirty tree are refused unless allowed", "[table][table_compare]") {
  TableStore s;
  add(s, "dense", {{1, 4.0}, {2, 4.1}});
  s.git_rev = "fedcba9876543210fedcba9876543210fedcba98";
  add(s, "mohd", {{1, 3.9}, {2, 4.0}});
  CHECK_THROWS_WITH(s.build(kSpec), Contains("the selected runs come from 2 builds: 0123456789ab (runs 1, 2); fedcba987654 "
                                             "(runs 3, 4); one study is one pinned build"));
  CHECK_THROWS_WITH(s.build(kSpec), Contains("--allow-mixed-builds"));
  const Table allowed = s.build(kSpec, true);
  CHECK(allowed.builds == "MIXED BUILDS (allowed by --allow-mixed-builds): 0123456789ab (runs 1, 2); fedcba987654 (runs 3, 4)");
  CHECK_THAT(format_markdown(allowed), Contains("- builds: MIXED BUILDS (allowed by --allow-mixed-builds)"));

  TableStore dirty;
  dirty.git_rev = "0123456789abcdef0123456789abcdef01234567+dirty";
  add(dirty, "dense", {{1, 4.0}, {2, 4.1}});
  CHECK_THROWS_WITH(dirty.build(kSpec), Contains("come from a build that cannot be pinned (uncommitted tree or no revision): "
                                                 "0123456789ab+dirty (runs 1, 2)"));
  CHECK_NOTHROW(dirty.build(kSpec, true));
}
