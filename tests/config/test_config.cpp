// Config loading: TOML, --set overrides, unknown keys, ranges, types and the config hash.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/config/config.h"

using namespace moxlab;

namespace {
std::string write_toml(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / "moxlab_tests";
  std::filesystem::create_directories(dir);
  auto p = (dir / name).string();
  std::ofstream(p) << text;
  return p;
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("TOML and --set overrides resolve into the option structs", "[config]") {
  auto p = write_toml("ok.toml", "[model]\ndim = 64\nn_heads = 4\nn_kv_heads = 2\n[train]\nlr = 1e-3\n[data]\nextra = [\"mine=/tmp/x.txt\"]\n");
  Config c = load_config(p, {"train.max_steps=7", "train.warmup_steps=2", "model.tie_embeddings=false", "eval.tasks=arc_easy,piqa"});
  CHECK(c.model.dim == 64);
  CHECK(c.train.lr == Approx(1e-3));
  CHECK(c.train.max_steps == 7);
  CHECK_FALSE(c.model.tie_embeddings);
  CHECK(c.eval.tasks == std::vector<std::string>{"arc_easy", "piqa"});
  CHECK(c.data.extra == std::vector<std::string>{"mine=/tmp/x.txt"});
  Config back = config_from_json(c.to_json());
  CHECK(back.to_json() == c.to_json());
}

TEST_CASE("Bad configs fail with one line naming the problem", "[config]") {
  auto unknown = write_toml("unknown.toml", "[model]\ndimm = 64\n");
  std::string e = error_of([&] { load_config(unknown); });
  CHECK(e.find("unknown config key 'model.dimm'") != std::string::npos);
  CHECK(e.find("did you mean 'model.dim'") != std::string::npos);
  CHECK(error_of([] { load_config("", {"train.lr=-1"}); }).find("out of range") != std::string::npos);
  CHECK(error_of([] { load_config("", {"model.dim=abc"}); }).find("expects an integer") != std::string::npos);
  CHECK(error_of([] { load_config("", {"model.dim=100", "model.n_heads=3"}); }).find("divisible") != std::string::npos);
  CHECK(error_of([] { load_config("/no/such/file.toml"); }).find("cannot open config file") != std::string::npos);
  auto bad = write_toml("bad.toml", "[model\ndim = 1\n");
  CHECK(error_of([&] { load_config(bad); }).find("bad.toml:1") != std::string::npos);
  CHECK(error_of([] { load_config("", {"nokey"}); }).find("key=value") != std::string::npos);
}

TEST_CASE("The config hash ignores run naming but not the recipe", "[config]") {
  Config a = load_config("", {"run.name=a"});
  Config b = load_config("", {"run.name=b", "run.out_dir=/tmp/elsewhere"});
  Config c = load_config("", {"train.seed=2"});
  CHECK(a.hash() == b.hash());
  CHECK(a.hash() != c.hash());
  CHECK(a.hash().size() == 64);
}

TEST_CASE("A config split over another number of ranks differs only in train.batch_size", "[config]") {
  const Config two_ranks = load_config("", {"train.batch_size=8"});
  CHECK(same_but_rank_batch(two_ranks, load_config("", {"train.batch_size=16"})));
  CHECK(same_but_rank_batch(two_ranks, load_config("", {"train.batch_size=16", "train.threads=2", "run.name=x"})));
  CHECK_FALSE(same_but_rank_batch(two_ranks, load_config("", {"train.batch_size=16", "train.lr=1e-3"})));
  CHECK_FALSE(same_but_rank_batch(two_ranks, load_config("", {"train.batch_size=8", "train.seq_len=64"})));
}

TEST_CASE("MoHD options load from [mohd.attn] / [mohd.ffn] and are checked against the model", "[config][mohd]") {
  auto p = write_toml("mohd.toml", "[model]\ndim = 64\nn_heads = 4\nn_kv_heads = 2\nattention = \"mohd\"\nffn = \"mohd\"\n"
                                   "[mohd.attn]\nsub_dims = 8\nactive = 4\nshared = 3\nfusion_groups = 8\n"
                                   "[mohd.ffn]\nsub_dims = 16\nactive = 8\nshared = 0\nscaling = false\nbalance_beta = 0\n");
  Config c = load_config(p);
  CHECK(c.model.mohd_attn.shared == 3);
  CHECK(c.model.mohd_ffn.sub_dims == 16);
  CHECK_FALSE(c.model.mohd_ffn.scaling);
  CHECK(c.model.mohd_ffn.balance_beta == 0.0);
  CHECK(config_from_json(c.to_json()).to_json() == c.to_json());
  CHECK(error_of([&] { load_config(p, {"mohd.attn.sub_dims=7"}); }).find("divisible by mohd.attn.sub_dims") != std::string::npos);
  CHECK(error_of([&] { load_config(p, {"mohd.ffn.active=17"}); }).find("mohd.ffn.active must not exceed") != std::string::npos);
  CHECK(error_of([&] { load_config(p, {"mohd.attn.shared=5"}); }).find("mohd.attn.shared must not exceed") != std::string::npos);
  CHECK(error_of([&] { load_config(p, {"mohd.attn.fusion_groups=5"}); }).find("fusion_groups") != std::string::npos);
  CHECK(error_of([&] { load_config(p, {"model.ffn=moe"}); }).find("model.ffn") != std::string::npos);
  // Dense components ignore their MoHD keys.
  CHECK_NOTHROW(load_config("", {"mohd.ffn.sub_dims=7"}));
}

TEST_CASE("model.head_dim decouples the attention width from model.dim — run.variant is a label", "[config][mohd]") {
  // MoHD x2: d doubles while the attention keeps 6 heads x 32.
  const Config c = load_config("", {"model.dim=384", "model.n_heads=6", "model.n_kv_heads=3", "model.head_dim=32",
                                    "run.variant=mohd_x2"});
  CHECK(c.model.head_dim() == 32);
  CHECK(c.run.variant == "mohd_x2");
  CHECK(load_config("", {"model.dim=384", "model.n_heads=6", "model.n_kv_heads=3"}).model.head_dim() == 64);  // 0: dim / n_heads
  CHECK(load_config("", {"run.variant=a"}).hash() == load_config("", {"run.variant=b"}).hash());
  CHECK(error_of([] { load_config("", {"model.head_dim=31"}); }).find("must be even for RoPE") != std::string::npos);
  CHECK(error_of([] { load_config("", {"model.dim=100", "model.n_heads=6"}); }).find("divisible by model.n_heads") !=
        std::string::npos);
}

TEST_CASE("MoH options load from [moh] and head budgets are checked against the model", "[config][moh]") {
  auto p = write_toml("moh.toml", "[model]\ndim = 64\nn_heads = 8\nn_kv_heads = 4\nn_layers = 2\nattention = \"moh\"\n"
                                  "[moh]\nshared = 2\nactive = 6\nlayer_active = [\"4\", \"6\"]\nrouter = \"query_norm\"\n");
  const Config c = load_config(p);
  CHECK(c.model.moh.shared == 2);
  CHECK(c.model.moh.active_heads(0) == 4);
  CHECK(c.model.moh.active_heads(1) == 6);
  CHECK(c.model.moh.router == "query_norm");
  CHECK(c.model.moh.two_stage);
  CHECK(c.model.moh.gate_form == "paper");
  CHECK(c.model.moh.balance_beta == 0.01);
  CHECK_THAT(error_of([&] { load_config(p, {"moh.layer_active=4"}); }), Catch::Contains("one entry per layer (2), got 1"));
  CHECK_THAT(error_of([&] { load_config(p, {"moh.layer_active=1,6"}); }), Catch::Contains("MoH head budget 1 must be between moh.shared (2)"));
  CHECK_THAT(error_of([&] { load_config(p, {"moh.layer_active=4,x"}); }), Catch::Contains("must be integers, got 'x'"));
  CHECK_THAT(error_of([&] { load_config(p, {"moh.layer_active=", "moh.active=9"}); }), Catch::Contains("between moh.shared (2) and model.n_heads (8)"));
  CHECK_THAT(error_of([&] { load_config(p, {"moh.router=norm"}); }), Catch::Contains("moh.router"));
}

TEST_CASE("Checkpoint configs written with a renamed key still load, with the value mapped", "[config]") {
  Config c;
  nlohmann::json j = nlohmann::json::parse(c.to_json());
  j.erase("tomoe.conversion");
  j["tomoe.vo_top_k"] = "mean";  // an earlier build's name for the conversion rule
  CHECK(config_from_json(j.dump()).model.tomoe.conversion == "paper");
  j["tomoe.vo_top_k"] = "widest";
  CHECK(config_from_json(j.dump()).model.tomoe.conversion == "code");
  // model.kernels moved to execution.form: in checkpoints, TOML files and --set alike.
  j.erase("execution.form");
  j["model.kernels"] = "sparse";
  CHECK(config_from_json(j.dump()).execution.form == "sparse");
  const std::string p = write_toml("renamed.toml", "[model]\nkernels = \"reference\"\n");
  CHECK(load_config(p).execution.form == "reference");
  CHECK(load_config("", {"model.kernels=sparse"}).execution.form == "sparse");
  CHECK(load_config("", {"tomoe.vo_top_k=widest"}).model.tomoe.conversion == "code");
  CHECK(load_config("", {"execution.form=reference"}).execution.form == "reference");
  CHECK(error_of([] { load_config("", {"execution.form=fast"}); }).find("execution.form") != std::string::npos);
  j["tomoe.bogus"] = 1;  // still: an unknown key is an error
  CHECK(error_of([&] { config_from_json(j.dump()); }).find("tomoe.bogus") != std::string::npos);
}

TEST_CASE("execution.denormals flushes by default, keeps on request and leaves the config hash alone", "[config]") {
  const Config flush = load_config("");
  CHECK(flush.execution.denormals == "flush");
  const Config keep = load_config("", {"execution.denormals=keep"});
  CHECK(keep.execution.denormals == "keep");
  CHECK(keep.hash() == flush.hash());  // equal results to rounding, as execution.form
  CHECK(error_of([] { load_config("", {"execution.denormals=zero"}); }).find("execution.denormals") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(keep.to_json());
  j.erase("execution.denormals");  // an earlier build's checkpoint config
  CHECK(config_from_json(j.dump()).execution.denormals == "flush");
}

TEST_CASE("Config JSON that is not an object of scalars and string lists is a one-line error", "[config]") {
  // Found by fuzz_config_toml: both escaped as nlohmann exceptions, not moxlab::Error.
  CHECK_THROWS_AS(config_from_json("3"), moxlab::Error);
  CHECK_THROWS_AS(config_from_json("[\"model.dim\", 64]"), moxlab::Error);
  CHECK_THAT(error_of([] { config_from_json("{\"moh.layer_active\": [1, 2]}"); }), Catch::Contains("moh.layer_active"));
}
