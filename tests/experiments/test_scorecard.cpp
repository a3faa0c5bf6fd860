// The claims scorecard (experiments/report/scorecard.h): a row per claim with the paired difference, its
// hand-computed 95% interval, n, the Holm-adjusted p of the paired t-test, the verdict, model size and
// token budget from the runs' results, the exploratory mark under 3 seeds, pending rows (no store yet,
// too few finished seeds), the block replacement in a Markdown file, and the errors.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/common/error.h"
#include "experiments/report/scorecard.h"
#include "tests/experiments/table_test_support.h"

using namespace moxlab;
using moxlab::testing::TableStore;
using Catch::Matchers::Contains;

namespace {

const char* kLossMeta = R"({"metric":"loss","split":"val"})";

void add(TableStore& s, std::int64_t sweep, const std::string& variant, const std::vector<std::pair<int, double>>& losses,
         double params) {
  for (const auto& [seed, loss] : losses)
    s.add_run({{"run.variant", variant}, {"train.seed", seed}},
              {{"train_end/val/loss", loss, kLossMeta}, {"params/active", params, "{}"}, {"train/tokens_seen", 18.4e6, "{}"}},
              RunStatus::finished, sweep);
}

std::string claims(const std::string& store, const std::string& method, const std::string& extra = "") {
  return "[[claim]]\npaper = \"MoHD\"\nclaim = \"compression keeps quality\"\npaper_number = \"-1.3 acc\"\n"
         "store = \"" + store + "\"\nsweep = \"study\"\nmethod = \"" + method + "\"\nreference = \"dense\"\n"
         "metric_label = \"val loss (nats)\"\ndirection = \"lower\"\n" + extra;
}

}  // namespace

TEST_CASE("scorecard: a row per claim with the paired interval, verdict, model size and budget", "[scorecard]") {
  TableStore s;
  const auto sweep = s.store.create_sweep("study", "{}");
  // d = (-0.20, -0.15, -0.20): mean -0.183, 95% interval [-0.255, -0.112] (test_table_compare's hand values).
  add(s, sweep, "dense", {{1, 4.00}, {2, 4.10}, {3, 3.90}}, 885000);
  add(s, sweep, "mohd_50", {{1, 3.80}, {2, 3.95}, {3, 3.70}}, 470000);
  add(s, sweep, "x2", {{1, 3.95}, {2, 4.00}}, 900000);
  const std::string dir = s.dir.path.string();
  const std::string store = std::filesystem::path(s.store.path()).filename().string();
  const std::string md = scorecard_markdown(parse_claims(claims(store, "mohd_50", "note = \"tiny only\"\n"), "c.toml"), dir);
  CHECK_THAT(md, Contains("| MoHD | compression keeps quality (mohd_50 vs dense, lower val loss (nats)) | -1.3 acc | "
                          "0.47 M active, 18.4 M tokens | -0.183 [-0.255, -0.112] (n=3) | 0.008 | reproduces | " +
                          store + ", sweep study, build 0123456789ab |"));
  CHECK_THAT(md, Contains("1. MoHD, compression keeps quality: tiny only"));
  // d = (-0.20, -0.15, -0.20): t = -0.1833 / (0.02887 / sqrt 3) = -11, p = 1 - 11 / sqrt(2 + 121) = 0.00816 (dof 2).
  // Two paired seeds: the verdict stands but is marked exploratory (n = 2: t(0.975) = 12.7); d = (-0.05,
  // -0.10), t = -0.075 / 0.025 = -3, p = 1 - (2 / pi) atan 3 = 0.2048 (dof 1).
  CHECK_THAT(scorecard_markdown(parse_claims(claims(store, "x2"), "c.toml"), dir),
             Contains("| -0.075 [-0.393, +0.243] (n=2) | 0.205 unadjusted | inconclusive (exploratory: n < 3) |"));
  // Pending rows: a store not committed yet, a method with one finished seed (the second still running).
  CHECK_THAT(scorecard_markdown(parse_claims(claims("absent.db", "x2"), "c.toml"), dir),
             Contains("| — | store not committed yet | — | pending | absent.db, sweep study |"));
  add(s, sweep, "moh", {{1, 3.9}}, 600000);
  s.add_run({{"run.variant", "moh"}, {"train.seed", 2}}, {}, RunStatus::running, sweep);
  CHECK_THAT(scorecard_markdown(parse_claims(claims(store, "moh"), "c.toml"), dir),
             Contains("| — | 1 of 2 seeds paired so far | — | pending |"));
  // A run finished but not yet evaluated (its member still writes the final metrics) pairs no seed.
  add(s, sweep, "moe", {{1, 3.9}}, 600000);
  s.add_run({{"run.variant", "moe"}, {"train.seed", 2}}, {}, RunStatus::finished, sweep);
  CHECK_THAT(scorecard_markdown(parse_claims(claims(store, "moe"), "c.toml"), dir),
             Contains("| — | 1 of 2 seeds paired so far | — | pending |"));
  // Errors name the claim: a variant no run has (a misspelt name is not "pending"), an unknown sweep,
  // mixed builds.
  CHECK_THROWS_WITH(scorecard_markdown(parse_claims(claims(store, "mohd50"), "c.toml"), dir),
                    Contains("claim 1 (MoHD: compression keeps quality): no run or member of sweep study has run.variant = mohd50"));
  std::string other_sweep = claims(store, "x2");
  other_sweep.replace(other_sweep.find("\"study\""), 7, "\"stdy\"");
  CHECK_THROWS_WITH(scorecard_markdown(parse_claims(other_sweep, "c.toml"), dir), Contains("no sweep named 'stdy'"));
  s.git_rev = "fedcba9876543210fedcba9876543210fedcba98";
  add(s, sweep, "x2", {{3, 3.9}}, 900000);
  CHECK_THROWS_WITH(scorecard_markdown(parse_claims(claims(store, "x2"), "c.toml"), dir), Contains("2 builds"));
}

TEST_CASE("scorecard: p Holm-adjusted over the rows with a result at n >= 3, and a verdict that does not survive says so",
          "[scorecard]") {
  TableStore s;
  const auto sweep = s.store.create_sweep("study", "{}");
  add(s, sweep, "dense", {{1, 4.00}, {2, 4.10}, {3, 3.90}}, 885000);
  add(s, sweep, "mohd_50", {{1, 3.80}, {2, 3.95}, {3, 3.70}}, 470000);  // p = 0.008163 (above)
  // d = (-0.10, -0.20, -0.20): mean -0.1667, sd 0.05774, t = -5, p = 1 - 5 / sqrt 27 = 0.037750 (dof 2).
  add(s, sweep, "moh_a", {{1, 3.90}, {2, 3.90}, {3, 3.70}}, 600000);
  add(s, sweep, "moh_b", {{1, 3.90}, {2, 3.90}, {3, 3.70}}, 600000);
  const std::string dir = s.dir.path.string();
  const std::string store = std::filesystem::path(s.store.path()).filename().string();
  // Two paired seeds: a reading outside the family, its p unadjusted (d = (-0.05, -0.10): p = 0.2048).
  add(s, sweep, "x2", {{1, 3.95}, {2, 4.00}}, 900000);
  // Holm over 3 rows (neither the pending row nor the n = 2 one is a test): 0.008163 x 3 = 0.0245;
  // 0.037750 x 2 = 0.0755, and the running maximum gives the last 0.0755 too. Each row's interval
  // excludes zero on its own.
  const std::string md = scorecard_markdown(
      parse_claims(claims(store, "mohd_50") + claims(store, "moh_a") + claims(store, "moh_b") + claims("absent.db", "x") +
                       claims(store, "x2"),
                   "c.toml"),
      dir);
  CHECK_THAT(md, Contains("| -0.075 [-0.393, +0.243] (n=2) | 0.205 unadjusted | inconclusive (exploratory: n < 3) |"));
  CHECK_THAT(md, Contains("Holm-adjusted over the 3 rows with a result at n >= 3"));
  CHECK_THAT(md, Contains("(mohd_50 vs dense, lower val loss (nats)) | -1.3 acc | 0.47 M active, 18.4 M tokens | "
                          "-0.183 [-0.255, -0.112] (n=3) | 0.024 | reproduces | "));
  CHECK_THAT(md, Contains("(moh_a vs dense, lower val loss (nats)) | -1.3 acc | 0.60 M active, 18.4 M tokens | "
                          "-0.167 [-0.310, -0.023] (n=3) | 0.075 | reproduces (not after Holm) | "));
  CHECK_THAT(md, Contains("(moh_b vs dense, lower val loss (nats)) | -1.3 acc | 0.60 M active, 18.4 M tokens | "
                          "-0.167 [-0.310, -0.023] (n=3) | 0.075 | reproduces (not after Holm) | "));
  CHECK_THAT(md, Contains("| — | store not committed yet | — | pending |"));
  // Alone, moh_a's p is its own: 0.038 < 0.05, no mark.
  CHECK_THAT(scorecard_markdown(parse_claims(claims(store, "moh_a"), "c.toml"), dir),
             Contains("| 0.038 | reproduces | "));
}

TEST_CASE("scorecard: claims file errors and the README block", "[scorecard]") {
  CHECK_THROWS_WITH(parse_claims("[[claim]]\npaper = \"x\"\n", "c.toml"), Contains("'claim' is required"));
  CHECK_THROWS_WITH(parse_claims(claims("s.db", "m", "colour = 1\n"), "c.toml"), Contains("unknown key 'colour'"));
  std::string wrong = claims("s.db", "m");
  wrong.replace(wrong.find("\"lower\""), 7, "\"less\"");
  CHECK_THROWS_WITH(parse_claims(wrong, "c.toml"), Contains("'direction' must be \"lower\" or \"higher\""));
  CHECK_THROWS_WITH(parse_claims("title = 1\n", "c.toml"), Contains("unknown key 'title'"));

  const std::string readme = "# R\n<!-- scorecard:begin -->\nold\n<!-- scorecard:end -->\nrest\n";
  CHECK(replace_scorecard_block(readme, "new\n") == "# R\n<!-- scorecard:begin -->\nnew\n<!-- scorecard:end -->\nrest\n");
  CHECK_THROWS_WITH(replace_scorecard_block("# R\n", "x"), Contains("scorecard:begin"));
}

TEST_CASE("the shipped claims parse, every one with a paper number and a direction", "[scorecard]") {
  const auto shipped = load_claims(std::string(MOXLAB_SOURCE_DIR) + "/experiments/claims.toml");
  CHECK(shipped.size() >= 8);
  for (const auto& c : shipped) {
    INFO(c.paper << ": " << c.claim);
    CHECK_FALSE(c.paper_number.empty());
    CHECK(c.direction != 0);
    CHECK(c.method != c.reference);
  }
}
