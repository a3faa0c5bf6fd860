// viewer/model/run_filter and run_catalog: filter syntax and matching, and the catalog's snapshot of a
// real run store (fields, varying keys, refresh on change, a missing store).
#include <catch2/catch.hpp>

#include <map>

#include "core/common/error.h"
#include "core/store/run_store.h"
#include "tests/scratch_dir.h"
#include "viewer/model/run_catalog.h"
#include "viewer/model/run_filter.h"

using namespace moxlab;
using namespace moxlab::viewer;
using Catch::Matchers::Contains;

namespace {
bool match(const std::string& filter, const std::map<std::string, std::string>& fields, const std::string& text = "") {
  return RunFilterExpr::parse(filter).matches(text, [&](const std::string& f) -> std::optional<std::string> {
    auto it = fields.find(f);
    if (it == fields.end()) return std::nullopt;
    return it->second;
  });
}
}  // namespace

TEST_CASE("run filter: comparisons, words, and / or", "[viewer][filter]") {
  const std::map<std::string, std::string> f = {{"model.dim", "384"}, {"status", "finished"}, {"ppl/val/all", "309.6"},
                                                {"run.variant", "mohd_x2"}};
  CHECK(match("", f));
  CHECK(match("model.dim>=384", f));
  CHECK(match("model.dim >= 384 status=finished", f));
  CHECK_FALSE(match("model.dim>384", f));
  CHECK(match("model.dim > 96", f));  // numeric, not text comparison ("384" < "96" as text)
  CHECK(match("ppl/val/all<310 && status == finished", f));
  CHECK(match("run.variant~X2", f));
  CHECK_FALSE(match("run.variant=mohd", f));
  CHECK(match("run.variant!=dense", f));
  CHECK_FALSE(match("train.lr<1", f));  // absent field: false
  CHECK(match("train.lr<1 or model.dim=384", f));
  CHECK(match("mohd", f, "mohd_tiny.3 train MOHD_x2"));
  CHECK_FALSE(match("dense", f, "mohd_tiny.3 train"));
  CHECK(match("run.variant=\"mohd_x2\" and status=finished", f));
  // A diverged run (NaN result) neither equals nor orders with a number.
  const std::map<std::string, std::string> nan = {{"ppl/val/all", "nan"}};
  CHECK_FALSE(match("ppl/val/all<=300", nan));
  CHECK_FALSE(match("ppl/val/all>=300", nan));
  CHECK_FALSE(match("ppl/val/all=300", nan));
  CHECK(match("ppl/val/all!=300", nan));
}

TEST_CASE("run filter: syntax errors are one-line Errors", "[viewer][filter]") {
  CHECK_THROWS_WITH(RunFilterExpr::parse("model.dim>="), Contains("operator '>=' needs a value"));
  CHECK_THROWS_WITH(RunFilterExpr::parse(">= 3"), Contains("needs a field"));
  CHECK_THROWS_WITH(RunFilterExpr::parse("a => 3"), Contains("unknown operator '=>'"));
  CHECK_THROWS_WITH(RunFilterExpr::parse("a=\"b"), Contains("unterminated quote"));
  CHECK_THROWS_WITH(RunFilterExpr::parse("or a=1"), Contains("needs a term on each side"));
  CHECK_THROWS_WITH(RunFilterExpr::parse("a=1 or"), Contains("needs a term on each side"));
}

TEST_CASE("run catalog: snapshot of a store, fields, varying keys, refresh", "[viewer][catalog]") {
  moxlab::testing::ScratchDir dir("catalog");
  const std::string db = dir.file("runs.db");
  RunCatalog missing(db);
  CHECK(missing.refresh());
  CHECK_THAT(missing.error(), Contains("no run store at"));

  std::int64_t a, b;
  {
    RunStore store(db);
    const auto sweep = store.create_sweep("mohd_tiny", "{}");
    RunRecord r;
    r.name = "mohd_tiny.0";
    r.kind = "train";
    r.seed = 1;
    r.sweep_id = sweep;
    r.config_json = R"({"model.dim":192,"run.variant":"dense","train.seed":1,"train.lr":0.003})";
    a = store.create_run(r);
    r.name = "mohd_tiny.3";
    r.config_json = R"({"model.dim":384,"run.variant":"mohd_x2","train.seed":1,"train.lr":0.003})";
    b = store.create_run(r);
    store.update_status(a, RunStatus::finished);
    store.put_result(a, "ppl/val/all", 322.5);
  }
  RunCatalog cat(db);
  REQUIRE(cat.refresh());
  REQUIRE(cat.error().empty());
  REQUIRE(cat.runs().size() == 2);
  const RunRow* ra = cat.find(a);
  REQUIRE(ra);
  CHECK(ra->sweep_name == "mohd_tiny");
  CHECK(ra->variant == "dense");
  CHECK(RunCatalog::field(*ra, "model.dim") == "192");
  CHECK(RunCatalog::field(*ra, "ppl/val/all") == "322.5");
  CHECK(RunCatalog::field(*ra, "status") == "finished");
  CHECK(RunCatalog::field(*ra, "sweep") == "mohd_tiny");
  CHECK_FALSE(RunCatalog::field(*ra, "nope"));
  CHECK(RunCatalog::varying_config_keys({ra, cat.find(b)}) == std::vector<std::string>{"run.variant", "model.dim"});

  cat.refresh();               // at most one extra read: our own close may checkpoint the WAL
  CHECK_FALSE(cat.refresh());  // nothing changed on disk
  cat.set_tags(b, {"best"});
  CHECK(cat.find(b)->run.tags == std::vector<std::string>{"best"});
  CHECK(RunCatalog::field(*cat.find(b), "tag") == "best");
  RunStore(db).put_result(b, "ppl/val/all", 309.6);
  CHECK(cat.refresh());  // b is not finished: its results are re-read
  CHECK(cat.find(b)->results.at("ppl/val/all") == Approx(309.6));
  // Evaluation adds results to a run after it finished: a recently finished run is re-read...
  RunStore(db).put_result(a, "ppl/wikitext2", 806.5);
  CHECK(cat.refresh());
  CHECK(cat.find(a)->results.count("ppl/wikitext2") == 1);
  // ...one that finished long ago is reused until a forced reload.
  RunStore(db).set_finished(a, unix_now() - 2 * RunCatalog::kResultsSettleSeconds);
  CHECK(cat.refresh());
  RunStore(db).put_result(a, "piqa/acc", 0.47);
  CHECK(cat.refresh());
  CHECK(cat.find(a)->results.count("piqa/acc") == 0);
  CHECK(cat.refresh(true));
  CHECK(cat.find(a)->results.count("piqa/acc") == 1);
}
