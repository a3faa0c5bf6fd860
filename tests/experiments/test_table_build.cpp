// experiments/report/table_build: run selection, grouping into rows, aggregation (mean, standard error,
// n), placeholders, column groups and the honesty checks, on a scratch store with known numbers.
#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "tests/experiments/table_test_support.h"

using namespace moxlab;
using moxlab::testing::kPplMeta;
using moxlab::testing::lr_config;
using moxlab::testing::TableStore;
using Catch::Matchers::Contains;

namespace {

const char* kLrLayout = R"(
[layout]
rows = ["model.dim", "train.lr"]
[[column]]
metric = "ppl/val/all"
label = "val ppl"
better = "lower"
)";

// The lr x width spec, with an optional [select] body.
std::string lr_spec(const std::string& select = "") {
  return "title = \"lr x width\"\n" + (select.empty() ? "" : "[select]\n" + select + "\n") + kLrLayout;
}

std::vector<std::string> key_texts(const TableRow& row) {
  std::vector<std::string> out;
  for (const auto& k : row.keys) out.push_back(k.text);
  return out;
}

std::vector<std::int64_t> run_ids(const TableRow& row) {
  std::vector<std::int64_t> out;
  for (const auto& r : row.runs) out.push_back(r.run);
  return out;
}

}  // namespace

TEST_CASE("table build: rows pool seeds into mean, standard error and n", "[table][table_build]") {
  TableStore s;
  const auto a1 = s.add_run(lr_config(128, 0.001, 1), {{"ppl/val/all", 10, kPplMeta}});
  const auto a2 = s.add_run(lr_config(128, 0.001, 2), {{"ppl/val/all", 12, kPplMeta}});
  s.add_run(lr_config(128, 0.001, 3), {{"ppl/val/all", 1000, kPplMeta}}, RunStatus::failed);  // not finished
  const auto b1 = s.add_run(lr_config(128, 0.01, 1), {{"ppl/val/all", 20, kPplMeta}});
  const auto c1 = s.add_run(lr_config(64, 0.001, 1), {{"ppl/val/all", 30, kPplMeta}});
  const auto c2 = s.add_run(lr_config(64, 0.001, 2), {{"params/total", 5, "{}"}});  // lacks the metric
  const auto d1 = s.add_run(lr_config(64, 0.0003, 1), {});                          // lacks every result

  const Table t = s.build(lr_spec());
  CHECK(t.warnings.empty());
  REQUIRE(t.headers.size() == 1);
  CHECK(t.headers[0].label == "val ppl");
  CHECK(t.metas[0].metric == "ppl");
  CHECK(t.metas[0].split == "val");
  CHECK(t.metas[0].definitions == std::vector<std::string>{"exp(mean NLL)"});
  CHECK(t.metas[0].digits == 0);  // every value is integral
  REQUIRE(t.rows.size() == 4);
  // Numbers sort numerically, key by key: 64 before 128, 0.0003 before 0.001.
  CHECK(key_texts(t.rows[0]) == std::vector<std::string>{"64", "0.0003"});
  CHECK(key_texts(t.rows[1]) == std::vector<std::string>{"64", "0.001"});
  CHECK(key_texts(t.rows[2]) == std::vector<std::string>{"128", "0.001"});
  CHECK(key_texts(t.rows[3]) == std::vector<std::string>{"128", "0.01"});

  const TableCell& pooled = t.rows[2].cells[0];
  CHECK(pooled.n == 2);
  CHECK(pooled.mean == 11.0);
  CHECK(pooled.std_err == Approx(1.0).epsilon(1e-15));  // sd sqrt(2) / sqrt(2)
  CHECK(pooled.runs == std::vector<std::int64_t>{a1, a2});
  CHECK(pooled.best);
  CHECK(run_ids(t.rows[2]) == std::vector<std::int64_t>{a1, a2});
  CHECK(t.rows[2].runs[1].seed == "2");
  CHECK(t.rows[2].runs[1].config_hash == "cfg201234567");
  CHECK(t.rows[2].runs[1].git_rev == "0123456789ab");
  CHECK(t.builds == "one build: 0123456789abcdef0123456789abcdef01234567");
  CHECK(t.rows[2].runs[1].data_digest == "feedbeef0011");

  CHECK(t.rows[3].cells[0].n == 1);
  CHECK(t.rows[3].cells[0].mean == 20.0);
  CHECK(t.rows[3].cells[0].runs == std::vector<std::int64_t>{b1});
  CHECK_FALSE(t.rows[3].cells[0].best);

  // A run without the metric stays in its row but not in the cell.
  CHECK(run_ids(t.rows[1]) == std::vector<std::int64_t>{c1, c2});
  CHECK(t.rows[1].cells[0].n == 1);
  CHECK(t.rows[1].cells[0].runs == std::vector<std::int64_t>{c1});
  CHECK(run_ids(t.rows[0]) == std::vector<std::int64_t>{d1});
  CHECK(t.rows[0].cells[0].n == 0);
  CHECK(t.selection == "6 runs (1, 2, 4, 5, 6, 7) selected by status finished");
}

TEST_CASE("table build: placeholders in metric patterns become row keys", "[table][table_build]") {
  TableStore s;
  auto obs = [](const std::string& layer, double v) {
    return std::make_tuple("observe/sparsity/blocks." + layer + ".attn.out", v, std::string(R"({"metric":"sparsity"})"));
  };
  s.add_run(lr_config(64, 0.001, 1, "b"), {obs("0", 0.5), obs("1", 0.25)});
  s.add_run(lr_config(64, 0.001, 1, "a"),
            {obs("10", 0.1), obs("2", 0.2), obs("0", 0.3), obs("1", 0.4), obs("x", 0.9),
             {"observe/sparsity/blocks.3.attn.out.extra", 7, "{}"}, {"observe/sparsity/blocks.3.ffn.out", 8, "{}"}});
  const Table t = s.build(R"(
title = "obs"
[layout]
rows = ["run.name", "layer"]
[[column]]
metric = "observe/sparsity/blocks.{layer}.attn.out"
)");
  std::vector<std::string> order;
  for (const auto& row : t.rows) order.push_back(row.keys[0].text + "/" + row.keys[1].text);
  // Layers sort numerically (2 before 10), text after numbers; non-matching keys are ignored.
  CHECK(order == std::vector<std::string>{"a/0", "a/1", "a/2", "a/10", "a/x", "b/0", "b/1"});
  CHECK(t.rows[3].cells[0].mean == 0.1);
  CHECK(t.rows[5].cells[0].mean == 0.5);
  CHECK(t.rows[5].runs.size() == 1);
  CHECK(t.metas[0].digits == 3);
  CHECK(t.warnings.empty());  // runs a and b are in different rows
}

TEST_CASE("table build: columns_by repeats the columns per value", "[table][table_build]") {
  TableStore s;
  auto cfg = [](double lr, int layers, int seed) {
    auto c = lr_config(64, lr, seed);
    c["model.n_layers"] = layers;
    return c;
  };
  s.add_run(cfg(0.001, 4, 1), {{"ppl/val/all", 10, kPplMeta}, {"params/active", 400, "{}"}});
  s.add_run(cfg(0.001, 2, 1), {{"ppl/val/all", 12, kPplMeta}, {"params/active", 200, "{}"}});
  s.add_run(cfg(0.001, 2, 2), {{"ppl/val/all", 14, kPplMeta}, {"params/active", 200, "{}"}});
  s.add_run(cfg(0.01, 2, 1), {{"ppl/val/all", 30, kPplMeta}});
  const Table t = s.build(R"(
title = "depth"
[layout]
rows = ["train.lr"]
columns_by = "model.n_layers"
[[column]]
metric = "ppl/val/all"
label = "ppl"
digits = 1
[[column]]
metric = "params/active"
label = "active"
)");
  CHECK(t.warnings.empty());  // n_layers is the column key, so the pooled row is consistent
  REQUIRE(t.headers.size() == 4);
  CHECK(t.headers[0].label == "ppl (model.n_layers=2)");
  CHECK(t.headers[1].label == "active (model.n_layers=2)");
  CHECK(t.headers[2].label == "ppl (model.n_layers=4)");
  CHECK(t.headers[3].label == "active (model.n_layers=4)");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].cells[0].mean == 13.0);
  CHECK(t.rows[0].cells[0].n == 2);
  CHECK(t.rows[0].cells[2].mean == 10.0);
  CHECK(t.rows[0].cells[3].mean == 400.0);
  CHECK(t.rows[1].cells[0].mean == 30.0);
  CHECK(t.rows[1].cells[2].n == 0);
  CHECK(t.rows[0].runs.size() == 3);

  // A placeholder can be the column key too.
  s.add_run(lr_config(64, 0.1, 1, "z"), {{"observe/s/blocks.0.attn.in", 1, "{}"}, {"observe/s/blocks.1.attn.in", 2, "{}"}});
  const Table p = s.build(R"(
title = "layers as columns"
[select]
runs = [5]
[layout]
rows = ["run.name"]
columns_by = "layer"
[[column]]
metric = "observe/s/blocks.{layer}.attn.in"
label = "s"
)");
  REQUIRE(p.headers.size() == 2);
  CHECK(p.headers[1].label == "s (layer=1)");
  REQUIRE(p.rows.size() == 1);
  CHECK(p.rows[0].cells[1].mean == 2.0);
}

TEST_CASE("table build: pooled runs with different configs or repeated seeds give warnings", "[table][table_build]") {
  TableStore s;
  auto longer = lr_config(64, 0.001, 2, "other-name");  // run.* differences do not count
  longer["train.max_steps"] = 200;
  s.add_run(lr_config(64, 0.001, 1), {{"ppl/val/all", 10, kPplMeta}});
  s.add_run(longer, {{"ppl/val/all", 12, kPplMeta}});
  s.add_run(lr_config(64, 0.01, 1), {{"ppl/val/all", 20, kPplMeta}});
  s.add_run(lr_config(64, 0.01, 1), {{"ppl/val/all", 21, kPplMeta}});
  const Table t = s.build(lr_spec());
  CHECK(t.warnings == std::vector<std::string>{
                          "row model.dim=64, train.lr=0.001 pools runs 1, 2 whose configs differ in train.max_steps",
                          "row model.dim=64, train.lr=0.01: runs 3, 4 share train.seed=1 (not independent samples)"});
  CHECK(t.rows[0].cells[0].n == 2);  // still aggregated, but flagged
}

TEST_CASE("table build: results of one column must agree on their metric", "[table][table_build]") {
  TableStore s;
  s.add_run(lr_config(64, 0.001, 1), {{"ppl/val/all", 10, kPplMeta}});
  s.add_run(lr_config(64, 0.001, 2), {{"ppl/val/all", 2.3, R"({"metric":"loss"})"}});
  CHECK_THROWS_WITH(s.build(lr_spec()), "column 'val ppl' (ppl/val/all) mixes results of different meta metrics: "
                                      "\"loss\" (runs 2) vs \"ppl\" (runs 1) (spec.toml)");
}

TEST_CASE("table build: selection by sweep, kind, status, ids and config filters", "[table][table_build]") {
  TableStore s;
  const auto old_sweep = s.store.create_sweep("lr", "{}");
  const auto new_sweep = s.store.create_sweep("lr", "{}");
  s.add_run(lr_config(64, 0.001, 1), {{"ppl/val/all", 10, kPplMeta}}, RunStatus::finished, old_sweep);
  s.add_run(lr_config(64, 0.001, 1), {{"ppl/val/all", 11, kPplMeta}}, RunStatus::finished, new_sweep);
  s.add_run(lr_config(128, 0.001, 1), {{"ppl/val/all", 12, kPplMeta}}, RunStatus::killed, new_sweep);
  s.add_run(lr_config(128, 0.01, 1), {{"ppl/val/all", 13, kPplMeta}});

  auto only_values = [&](const std::string& select) {
    const Table t = s.build(lr_spec(select));
    std::vector<double> out;
    for (const auto& row : t.rows) out.push_back(row.cells[0].mean);
    return out;
  };
  CHECK(only_values("sweep = \"lr\"") == std::vector<double>{11});  // the newest sweep of that name
  CHECK(only_values("sweep = 1") == std::vector<double>{10});
  CHECK(only_values("sweep = \"lr\"\nstatus = [\"finished\", \"killed\"]") == std::vector<double>{11, 12});
  CHECK(only_values("where = { \"model.dim\" = 128 }\nstatus = [\"killed\", \"finished\"]") == std::vector<double>{12, 13});
  CHECK(only_values("where = { train = { lr = 0.01 } }") == std::vector<double>{13});
  CHECK(only_values("runs = [1, 4]") == std::vector<double>{10, 13});
  CHECK(only_values("kind = \"train\"\nruns = [4]") == std::vector<double>{13});

  const Table t = s.build(lr_spec("runs = [4, 3, 99]"));
  CHECK(t.warnings == std::vector<std::string>{"select.runs: run 3 is absent or filtered out",
                                               "select.runs: run 99 is absent or filtered out"});

  CHECK_THROWS_WITH(s.build(lr_spec("sweep = \"nope\"")),
                    "no sweep named 'nope' in " + s.store.path());
  CHECK_THROWS_WITH(s.build(lr_spec("kind = \"eval\"")),
                    "no runs match the selection (kind eval, status finished) in " + s.store.path());
  CHECK_THROWS_WITH(s.build(lr_spec("where = { \"model.d_model\" = 1 }")),
                    "select.where key 'model.d_model' is not a config key of any candidate run in " + s.store.path());
  CHECK_THROWS_WITH(s.build(R"(
title = "t"
[layout]
rows = ["model.d_model"]
[[column]]
metric = "ppl/val/all"
)"),
                    "layout key 'model.d_model' is neither a placeholder of a column metric nor a config key of the "
                    "selected runs (spec.toml)");
}

TEST_CASE("table build: nested config JSON reads like dotted keys", "[table][table_build]") {
  TableStore s;
  s.add_run({{"model", {{"dim", 64}}}, {"train", {{"lr", 0.001}, {"seed", 1}}}}, {{"ppl/val/all", 10, kPplMeta}});
  s.add_run({{"model", {{"dim", 64}}}, {"train", {{"lr", 0.001}, {"seed", 2}}}}, {{"ppl/val/all", 14, kPplMeta}});
  const Table t = s.build(lr_spec());
  REQUIRE(t.rows.size() == 1);
  CHECK(key_texts(t.rows[0]) == std::vector<std::string>{"64", "0.001"});
  CHECK(t.rows[0].cells[0].mean == 12.0);
  CHECK(t.rows[0].cells[0].std_err == Approx(2.0));
  CHECK(t.warnings.empty());
}

TEST_CASE("table build: the shipped sweep summary over a sweep picked like --sweep", "[table][table_build]") {
  TableStore s;
  const auto sweep = s.store.create_sweep("tiny_lr_width", "{}");
  const std::string def = R"({"metric":"loss","split":"val","definition":"mean NLL"})";
  s.add_run(lr_config(64, 0.001, 1), {{"train_end/val/loss", 3.0, def}, {"params/active", 1000, "{}"}},
            RunStatus::finished, sweep);
  s.add_run(lr_config(64, 0.001, 2), {{"train_end/val/loss", 3.5, def}, {"params/active", 1000, "{}"}},
            RunStatus::finished, sweep);
  s.add_run(lr_config(64, 0.001, 3), {{"train_end/val/loss", 9.0, def}});  // not in the sweep
  TableSpec spec = load_table_spec(std::string(MOXLAB_SOURCE_DIR) + "/experiments/tables/sweep_summary.toml");
  spec.select.sweeps = {parse_sweep_ref("tiny_lr_width")};
  const Table t = build_table(spec, s.store);
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].cells[0].mean == 3.25);
  CHECK(t.rows[0].cells[0].std_err == Approx(0.25));
  CHECK(t.rows[0].cells[2].n == 0);  // not evaluated
  CHECK(t.rows[0].cells[4].mean == 1000);
}

TEST_CASE("table build: the shipped observations spec, one row per run name and layer", "[table][table_build]") {
  TableStore s;
  std::vector<std::tuple<std::string, double, std::string>> results;
  for (const char* layer : {"0", "1"})
    for (const char* m : {"share_top50/blocks.%.attn.in", "sparsity/blocks.%.attn.out", "sparsity/blocks.%.ffn.out",
                          "flow_median/blocks.%.attn.out", "shared5_all/blocks.%.attn.in", "shared5_one/blocks.%.attn.in"}) {
      std::string key = std::string("observe/") + m;
      key.replace(key.find('%'), 1, layer);
      results.emplace_back(key, 0.5, R"({"metric":"fraction"})");
    }
  s.add_run(lr_config(64, 0.001, 1, "tiny"), results);
  s.add_run(lr_config(64, 0.001, 2, "tiny"), results);
  s.add_run(lr_config(64, 0.001, 1, "untouched"), {{"ppl/val/all", 10, kPplMeta}});  // no observe results
  const Table t = build_table(load_table_spec(std::string(MOXLAB_SOURCE_DIR) + "/experiments/tables/observations.toml"), s.store);
  REQUIRE(t.rows.size() == 2);
  CHECK(row_label(t, t.rows[1]) == "run.name=tiny, layer=1");
  REQUIRE(t.rows[1].cells.size() == 6);
  for (const auto& c : t.rows[1].cells) {
    CHECK(c.n == 2);
    CHECK(c.std_err == 0.0);
  }
  CHECK(t.warnings.empty());
}

TEST_CASE("table build: where lists select any of their values — layout.order orders the first row key",
          "[table][table_build]") {
  TableStore s;
  auto cfg = [](const std::string& variant, int seed) {
    auto c = lr_config(128, 0.001, seed);
    c["run.variant"] = variant;
    return c;
  };
  s.add_run(cfg("mohd_x2", 1), {{"ppl/val/all", 10, kPplMeta}});
  s.add_run(cfg("dense", 1), {{"ppl/val/all", 20, kPplMeta}});
  s.add_run(cfg("ablation", 1), {{"ppl/val/all", 30, kPplMeta}});
  s.add_run(cfg("other", 1), {{"ppl/val/all", 40, kPplMeta}});
  const Table t = s.build(R"(title = "t"
[select]
where = { "run.variant" = ["mohd_x2", "dense", "ablation"] }
[layout]
rows = ["run.variant"]
order = ["dense", "mohd_x2"]
[[column]]
metric = "ppl/val/all"
)");
  REQUIRE(t.rows.size() == 3);  // "other" is not in the list
  CHECK(key_texts(t.rows[0]) == std::vector<std::string>{"dense"});
  CHECK(key_texts(t.rows[1]) == std::vector<std::string>{"mohd_x2"});
  CHECK(key_texts(t.rows[2]) == std::vector<std::string>{"ablation"});  // unlisted values follow, sorted
  CHECK(t.rows[0].cells[0].mean == 20);
  CHECK_THROWS_WITH(s.build("title = \"t\"\n[select]\nwhere = { \"run.variant\" = [] }\n[layout]\nrows = [\"run.variant\"]\n"
                            "[[column]]\nmetric = \"ppl/val/all\"\n"),
                    Contains("non-empty list"));
}

TEST_CASE("table build: curve/<key>/<step> reads the run's metric curves", "[table][table_build]") {
  TableStore s;
  const auto a = s.add_run(lr_config(128, 0.001, 1), {});
  const auto b = s.add_run(lr_config(128, 0.001, 2), {});
  s.store.log_metrics(a, 50, {{"val/ppl", 300.0}, {"train/loss", 6.0}});
  s.store.log_metrics(a, 100, {{"val/ppl", 200.0}});
  s.store.log_metrics(b, 50, {{"val/ppl", 310.0}});
  s.store.log_metrics(b, 100, {{"val/ppl", 220.0}});
  const Table t = s.build(R"(title = "curves"
[layout]
rows = ["model.dim"]
columns_by = "step"
[[column]]
metric = "curve/val/ppl/{step}"
label = "val ppl"
)");
  REQUIRE(t.rows.size() == 1);
  REQUIRE(t.headers.size() == 2);
  CHECK(t.headers[0].label == "val ppl (step=50)");
  CHECK(t.headers[1].label == "val ppl (step=100)");  // steps sort numerically
  CHECK(t.rows[0].cells[0].mean == 305.0);
  CHECK(t.rows[0].cells[1].mean == 210.0);
  CHECK(t.rows[0].cells[1].n == 2);
  CHECK(t.metas[0].metric == "ppl");
  CHECK(t.metas[0].split == "val");
}
