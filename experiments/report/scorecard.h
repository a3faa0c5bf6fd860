// The claims scorecard (docs/reproduction/README.md): one row per testable paper claim, computed from
// the committed study stores, never written by hand. A claims file lists each claim and where its
// evidence lives; every row is a paired comparison of a method against its reference (the same seeds)
// through moxlab table's [compare] (table_build.h), so a row says what a table would.
//
//   [[claim]]
//   paper = "MoHD"                              # required
//   claim = "50% compression keeps ..."         # required: the claim, in words
//   paper_number = "-0.04 avg. acc (Table 2)"   # required: what the paper reports
//   store = "mohd_micro_1a2b3c4.db"             # required: a store file under the stores directory
//   sweep = "mohd_micro"                        # required: sweep name(s) or id(s), comma-separated
//   method = "mohd_50"                          # required: the method's value of row_key
//   reference = "dense"                         # required: the reference's value of row_key
//   row_key = "run.variant"                     # default
//   metric = "train_end/val/loss"               # default: validation loss in nats
//   metric_label = "val loss (nats)"            # default: the metric
//   direction = "lower"                         # required: the paper's claim for method - reference:
//                                               # "lower" | "higher" (the method lowers / raises the metric)
//   note = "..."                                # optional: a caveat printed under the table
//
// A row shows the model and token budget (params/active and train/tokens_seen of the method's runs,
// means), the paired difference with its 95% interval and n, the verdict (reproduces / opposite /
// inconclusive), the paired t-test's p Holm-adjusted over the rows with a result at 3 or more paired
// seeds (holm.h; a verdict that does not survive the adjustment says so) and its source (store, sweep,
// build). Rows with 2 paired seeds are exploratory: their p is shown unadjusted and they are not in the
// Holm family, so a reading neither loosens nor tightens the tests. Runs of several builds in one claim are refused, as in moxlab table. A claim whose store
// is not committed yet, or with fewer than 2 finished paired seeds, is a "pending" row saying how far it
// is; a method or reference that no run or member of the sweeps has is an Error (a misspelt name).
#pragma once
#include <string>
#include <vector>

namespace moxlab {

struct Claim {
  std::string paper, claim, paper_number, store, sweep, method, reference;
  std::string row_key = "run.variant";
  std::string metric = "train_end/val/loss";
  std::string metric_label;
  int direction = 0;  // -1 lower, +1 higher
  std::string note;
};

std::vector<Claim> load_claims(const std::string& path);
std::vector<Claim> parse_claims(const std::string& toml_text, const std::string& origin);

// The scorecard as Markdown (a table, then notes and the sources); stores are opened read-only under
// stores_dir. Errors (a missing store, sweep or variant, mixed builds) name the claim.
std::string scorecard_markdown(const std::vector<Claim>& claims, const std::string& stores_dir);

// `text` with the part between the lines "<!-- scorecard:begin -->" and "<!-- scorecard:end -->" replaced
// by `block`; an Error when the markers are missing or out of order.
std::string replace_scorecard_block(const std::string& text, const std::string& block);

}  // namespace moxlab
