// `moxlab bench infer` end to end on a micro shape: every variant is timed and reported with its speedup
// and FLOP-ideal, a real ToMoE export can join, and bad requests are one-line errors.
#include "tests/core/torch_catch.h"

#include "tests/core/cli_support.h"

using namespace moxlab::testing;

TEST_CASE("bench infer times dense, MoHD, MoH and ToMoE variants and names bad requests", "[e2e][bench]") {
  const std::string dir = scratch_dir("bench_infer");
  write_micro_config(dir, 10);
  const std::string base = "bench infer --config micro.toml --set model.dim=48 --batch 2 --repeats 1 --vocab 64";
  const std::string seq32 = base + " --seq 32";
  auto r = run_cli(seq32, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* v : {"| dense |", "| mohd_50 |", "| mohd_75 |", "| moh_75 |", "| moh_50 |", "| tomoe_50 |", "| tomoe_40 |"})
    CHECK(r.out.find(v) != std::string::npos);
  CHECK(r.out.find("Layer 0 alone") != std::string::npos);
  CHECK(r.out.find("| dense | 100.0% |") != std::string::npos);  // the baseline's own ratios are 1

  auto some = run_cli(seq32 + " --variants mohd_50 --no-layers", dir);
  REQUIRE(some.exit_code == 0);
  CHECK(some.out.find("| mohd_50 |") != std::string::npos);
  CHECK(some.out.find("| moh_50 |") == std::string::npos);
  CHECK(some.out.find("Layer 0 alone") == std::string::npos);

  auto unknown = run_cli(seq32 + " --variants mohd_60", dir);
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.err.find("unknown variant 'mohd_60'") != std::string::npos);
  auto heads = run_cli(seq32 + " --set model.n_heads=6 --set model.n_kv_heads=3", dir);
  CHECK(heads.exit_code != 0);
  CHECK(heads.err.find("moh_75 needs model.n_heads divisible by 4") != std::string::npos);
  auto seq = run_cli(base + " --seq 128", dir);
  CHECK(seq.exit_code != 0);
  CHECK(seq.err.find("--seq plus the decoded token is longer than model.max_seq_len") != std::string::npos);
}
