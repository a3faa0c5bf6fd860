// experiments/report/table_spec: the TOML shape of a result table, and one-line errors naming the key
// and the file for anything else.
#include <filesystem>
#include <catch2/catch.hpp>

#include "core/common/error.h"
#include "experiments/report/table_spec.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {

TableSpec parse(const std::string& text) { return parse_table_spec(text, "t.toml"); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

const char* kMinimal = R"(
title = "t"
[layout]
rows = ["train.lr"]
[[column]]
metric = "ppl/val/all"
)";

}  // namespace

TEST_CASE("table spec: a full spec parses, defaults fill the rest", "[table][table_spec]") {
  const TableSpec s = parse(R"(
title = "Dense tiny: lr x width"
caption = "val perplexity"
[select]
sweep = "tiny_lr_width"
kind = "train"
status = ["finished", "killed"]
runs = [4, 5]
where = { "model.dim" = 192, train = { max_steps = 800 } }
[layout]
rows = ["model.dim", "train.lr"]
columns_by = "model.n_layers"
seed_key = "train.seed"
[[column]]
metric = "ppl/val/all"
label = "val ppl"
digits = 2
better = "lower"
[[column]]
metric = "params/active"
)");
  CHECK(s.title == "Dense tiny: lr x width");
  CHECK(s.caption == "val perplexity");
  REQUIRE(s.select.sweeps.size() == 1);
  CHECK(s.select.sweeps[0].name == "tiny_lr_width");
  CHECK_FALSE(s.select.sweeps[0].id);
  CHECK(s.select.kind == std::optional<std::string>("train"));
  CHECK(s.select.status == std::vector<RunStatus>{RunStatus::finished, RunStatus::killed});
  CHECK(s.select.runs == std::vector<std::int64_t>{4, 5});
  REQUIRE(s.select.where.size() == 2);
  CHECK(s.select.where[0].first == "model.dim");
  CHECK(s.select.where[0].second == 192);
  CHECK(s.select.where[1].first == "train.max_steps");  // nested tables mean dotted keys
  CHECK(s.layout.rows == std::vector<std::string>{"model.dim", "train.lr"});
  CHECK(s.layout.columns_by == "model.n_layers");
  REQUIRE(s.columns.size() == 2);
  CHECK(s.columns[0].label == "val ppl");
  CHECK(s.columns[0].digits == std::optional<int>(2));
  CHECK(s.columns[0].better == Better::lower);
  CHECK(s.columns[1].label == "params/active");  // label defaults to the metric
  CHECK_FALSE(s.columns[1].digits);
  CHECK(s.columns[1].better == Better::none);
  CHECK(s.placeholders().empty());

  const TableSpec m = parse(kMinimal);
  CHECK(m.select.sweeps.empty());
  CHECK(m.select.status == std::vector<RunStatus>{RunStatus::finished});
  CHECK(m.layout.seed_key == "train.seed");
  CHECK(m.layout.columns_by.empty());

  CHECK(parse(std::string(kMinimal) + "[select]\nsweep = 3\n").select.sweeps.at(0).id == std::optional<std::int64_t>(3));
  const auto two = parse(std::string(kMinimal) + "[select]\nsweep = [\"a\", 7]\n").select.sweeps;  // runs of either sweep
  REQUIRE(two.size() == 2);
  CHECK(two[0].name == "a");
  CHECK(two[1].id == std::optional<std::int64_t>(7));
  const auto refs = parse_sweep_refs("tomoe_tiny,12");
  REQUIRE(refs.size() == 2);
  CHECK(refs[0].name == "tomoe_tiny");
  CHECK(refs[1].id == std::optional<std::int64_t>(12));
  const auto spaced = parse_sweep_refs("micro_methods, micro_mohd_x2 ");
  REQUIRE(spaced.size() == 2);
  CHECK(spaced[1].name == "micro_mohd_x2");
  CHECK_THROWS_AS(parse_sweep_refs("a, "), moxlab::Error);  // an empty name
  CHECK(parse_sweep_ref("12").id == std::optional<std::int64_t>(12));
  CHECK(parse_sweep_ref("lr_width").name == "lr_width");
  // Found by fuzz_table_spec: an id past int64 escaped as std::out_of_range from stoll.
  CHECK_THROWS_AS(parse_sweep_ref("99999999999999999999"), moxlab::Error);
}

TEST_CASE("table spec: metric placeholders bind layout keys", "[table][table_spec]") {
  CHECK(metric_placeholders("observe/sparsity/blocks.{layer}.{tap}.{layer}") == std::vector<std::string>{"layer", "tap"});
  const TableSpec s = parse(R"(
title = "obs"
[layout]
rows = ["run.name", "layer"]
[[column]]
metric = "observe/sparsity/blocks.{layer}.attn.out"
[[column]]
metric = "observe/sparsity/blocks.{layer}.ffn.out"
)");
  CHECK(s.placeholders() == std::vector<std::string>{"layer"});
  CHECK(s.is_placeholder("layer"));
  CHECK_FALSE(s.is_placeholder("run.name"));
}

TEST_CASE("table spec: a column with a list of metrics is one column per metric, the rest shared", "[table][table_spec]") {
  const TableSpec s = parse(R"(
title = "t"
[layout]
rows = ["run.variant"]
[[column]]
metric = "params/active"
[[column]]
metric = ["curve/val/loss/250", "curve/val/loss/500"]
label = ["at 0.5 M", "at 1.0 M"]
digits = 2
better = "lower"
paper = "none"
)");
  REQUIRE(s.columns.size() == 3);
  CHECK(s.columns[0].metric == "params/active");
  CHECK(s.columns[1].metric == "curve/val/loss/250");
  CHECK(s.columns[1].label == "at 0.5 M");
  CHECK(s.columns[2].metric == "curve/val/loss/500");
  CHECK(s.columns[2].label == "at 1.0 M");
  for (int i : {1, 2}) {
    CHECK(s.columns[i].digits == std::optional<int>(2));
    CHECK(s.columns[i].better == Better::lower);
    CHECK(s.columns[i].paper == 0);
  }
  const TableSpec unlabelled = parse("title = \"t\"\n[layout]\nrows = [\"a\"]\n[[column]]\nmetric = [\"x\", \"y\"]\n");
  REQUIRE(unlabelled.columns.size() == 2);
  CHECK(unlabelled.columns[1].label == "y");

  const std::string head = "title = \"t\"\n[layout]\nrows = [\"layer\"]\n[[column]]\nmetric = \"x/{layer}\"\n[[column]]\n";
  CHECK(error_of(head + "metric = [\"y/{layer}\", \"z/{layer}\"]\nlabel = [\"y\"]\n") ==
        "table spec t.toml: 'column[2].label' must list one label per metric (2)");
  CHECK(error_of(head + "metric = [\"y/{layer}\"]\nlabel = \"y\"\n") ==
        "table spec t.toml: 'column[2].label' must be an array of strings");
  CHECK(error_of(head + "metric = []\n") == "table spec t.toml: 'column[2].metric' must not be empty");
  CHECK(error_of(head + "metric = [\"y/{layer}\", \"\"]\n") ==
        "table spec t.toml: 'column[2].metric' must not contain empty metrics");
  CHECK(error_of(head + "metric = [\"y/{layer}\", 3]\n") == "table spec t.toml: 'column[2].metric' must be an array of strings");
  // A placeholder error names the [[column]] the metric came from, not its position after expansion.
  CHECK(error_of(head + "metric = [\"y/{layer}\", \"z\"]\n[[column]]\nmetric = \"w/{layer}\"\n") ==
        "table spec t.toml: 'column[2].metric' lacks placeholder {layer} of the layout");
}

TEST_CASE("table spec: unknown keys, wrong types and empty fields are one-line errors", "[table][table_spec]") {
  const std::string base = kMinimal;
  CHECK(error_of("colour = 1\n" + base) == "table spec t.toml: unknown key 'colour'");
  CHECK(error_of(base + "[select]\nsweeps = 1\n") == "table spec t.toml: unknown key 'select.sweeps'");
  CHECK(error_of(base + "lable = \"x\"\n") == "table spec t.toml: unknown key 'column[1].lable'");
  CHECK(error_of("title = \"t\"\n[layout]\nrows = [\"a\"]\nfoo = 2\n[[column]]\nmetric = \"m\"\n") ==
        "table spec t.toml: unknown key 'layout.foo'");
  CHECK(error_of(R"(title = ""
[layout]
rows = ["a"]
[[column]]
metric = "m")") == "table spec t.toml: 'title' must not be empty");
  CHECK(error_of("title = \"t\"\n[[column]]\nmetric = \"m\"\n") == "table spec t.toml: 'layout' is required");
  CHECK(error_of("title = \"t\"\n[layout]\nrows = \"a\"\n[[column]]\nmetric = \"m\"\n") ==
        "table spec t.toml: 'layout.rows' must be an array of strings");
  CHECK(error_of("title = \"t\"\n[layout]\nrows = []\n[[column]]\nmetric = \"m\"\n") ==
        "table spec t.toml: 'layout.rows' must list at least one key");
  CHECK(error_of("title = \"t\"\n[layout]\nrows = [\"a\"]\n") ==
        "table spec t.toml: 'column' is required ([[column]] with a metric)");
  CHECK(error_of(base + "digits = \"2\"\n") == "table spec t.toml: 'column[1].digits' must be an integer");
  CHECK(error_of(base + "better = \"smaller\"\n") ==
        "table spec t.toml: 'column[1].better' must be \"lower\" or \"higher\", got \"smaller\"");
  CHECK(error_of(base + "[[column]]\nlabel = \"x\"\n") == "table spec t.toml: 'column[2].metric' is required");
  CHECK_THAT(error_of(base + "[select]\nstatus = [\"done\"]\n"),
             Contains("'select.status' has an unknown run status 'done'"));
  CHECK(error_of(base + "[select]\nsweep = 1.5\n") == "table spec t.toml: 'select.sweep' must be a sweep name or id, or a list of them");
  CHECK(error_of(base + "[select]\nsweep = []\n") == "table spec t.toml: 'select.sweep' must be a sweep name or id, or a list of them");
  CHECK(error_of(base + "[select]\nwhere = { a = [[1]] }\n") ==
        "table spec t.toml: 'select.where.a' must be a non-empty list of strings, numbers or booleans");
  CHECK(error_of(base + "[select]\nwhere = { a = 2024-01-01 }\n") ==
        "table spec t.toml: 'select.where.a' must be a string, number or boolean, or a list of them");
  CHECK(error_of("title = \"t\"\n[layout]\nrows = [\"a\"]\norder = [1]\n[[column]]\nmetric = \"x\"\n")
            .find("'layout.order'") != std::string::npos);
  CHECK(error_of("title = \"t\"\n[layout]\nrows = [\"a\"]\n[[column]]\nmetric = \"x/{layer}\"\n") ==
        "table spec t.toml: 'column[1].metric' placeholder {layer} is not a layout.rows or layout.columns_by key");
  CHECK(error_of("title = \"t\"\n[layout]\nrows = [\"layer\"]\n[[column]]\nmetric = \"x/{layer}\"\n[[column]]\n"
                 "metric = \"params/total\"\n") ==
        "table spec t.toml: 'column[2].metric' lacks placeholder {layer} of the layout");
  CHECK(error_of(base + "[[column]]\nmetric = \"x/{1a}\"\n") ==
        "table spec t.toml: 'column[2].metric' has a bad placeholder {1a} in \"x/{1a}\" (expected {identifier})");
  CHECK_THAT(error_of("title = \"t\"\n[layout\n"), Contains("table spec t.toml:2: "));

  moxlab::testing::ScratchDir dir("table_spec");
  CHECK_THROWS_WITH(load_table_spec(dir.file("absent.toml")), "cannot open table spec " + dir.file("absent.toml"));
  const std::string path = dir.write("bad.toml", "x = 1\n" + base);
  CHECK_THROWS_WITH(load_table_spec(path), "table spec " + path + ": unknown key 'x'");
}

TEST_CASE("table spec: the shipped specs parse", "[table][table_spec]") {
  const std::string dir = std::string(MOXLAB_SOURCE_DIR) + "/experiments/tables/";
  const TableSpec obs = load_table_spec(dir + "observations.toml");
  CHECK(obs.placeholders() == std::vector<std::string>{"layer"});
  CHECK(obs.columns.size() == 6);
  const TableSpec sweep = load_table_spec(dir + "sweep_summary.toml");
  CHECK(sweep.layout.rows == std::vector<std::string>{"train.lr", "model.dim"});
  CHECK(sweep.placeholders().empty());
  int specs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(load_table_spec(entry.path().string()));
    ++specs;
  }
  CHECK(specs > 20);
}
