// `moxlab bench infer|matmul|train` end to end on a micro shape: every variant is timed and reported with its
// speedup and FLOP-ideal, an op profile and paired speedups on request, a trained checkpoint's weights timed
// on request, and bad requests are one-line errors.
#include "tests/torch_catch.h"

#include <cstdlib>

#include "core/config/config.h"
#include "core/train/checkpoint.h"
#include "experiments/bench/op_profile.h"
#include "experiments/bench/train_bench.h"
#include "tests/cli/cli_support.h"

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

  auto some = run_cli(seq32 + " --variants mohd_50 --no-layers --profile 3 --paired 0.2", dir);
  REQUIRE(some.exit_code == 0);
  CHECK(some.out.find("| mohd_50 |") != std::string::npos);
  // The paired table: a row per variant (not dense), after the model table.
  const auto paired = some.out.find("Prefill speedup from adjacent calls");
  REQUIRE(paired != std::string::npos);
  CHECK(some.out.find("| mohd_50 | ", paired) != std::string::npos);
  CHECK(some.out.find("| dense |", paired) == std::string::npos);
  CHECK(some.out.find("| moh_50 |") == std::string::npos);
  CHECK(some.out.find("Layer 0 alone") == std::string::npos);
  // The op profile: each variant's costliest ops by name and input shapes, three rows and the total.
  CHECK(some.out.find("Profile of mohd_50's prefill") != std::string::npos);
  CHECK(some.out.find("| aten::") != std::string::npos);
  CHECK(some.out.find("| (all ") != std::string::npos);

  auto unknown = run_cli(seq32 + " --variants mohd_60", dir);
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.err.find("unknown variant 'mohd_60'") != std::string::npos);
  auto heads = run_cli(seq32 + " --set model.n_heads=6 --set model.n_kv_heads=3", dir);
  CHECK(heads.exit_code != 0);
  CHECK(heads.err.find("moh_75 needs model.n_heads divisible by 4") != std::string::npos);
  auto negative = run_cli(seq32 + " --paired -1", dir);
  CHECK(negative.exit_code != 0);
  auto seq = run_cli(base + " --seq 128", dir);
  CHECK(seq.exit_code != 0);
  CHECK(seq.err.find("--seq plus the decoded token is longer than model.max_seq_len") != std::string::npos);
}

TEST_CASE("bench matmul times the packed products against torch::mm at the model's shapes", "[e2e][bench]") {
  const std::string dir = scratch_dir("bench_matmul");
  write_micro_config(dir, 10);
  // dim 48 with 4 heads of which 2 for keys and values: Q/K/V 48 -> 96; the micro config's FFN width.
  auto r = run_cli("bench matmul --config micro.toml --set model.dim=48 --set model.n_heads=4 --set model.n_kv_heads=2 --rows 1,7 --repeats 1", dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* row : {"| Q/K/V 48 -> 96 | 1 |", "| Q/K/V 48 -> 96 | 7 |", "| W_O 48 -> 48 | 7 |", "| SwiGLU gate/up 48 -> ", "| W_down "})
    CHECK(r.out.find(row) != std::string::npos);
  auto bad = run_cli("bench matmul --config micro.toml --rows 0", dir);
  CHECK(bad.exit_code != 0);
  // MOXLAB_ISA forces the kernels' variant (an AVX2-only machine timed on an AVX-512 one); the header names it.
  setenv("MOXLAB_ISA", "portable", 1);
  auto portable = run_cli("bench matmul --config micro.toml --set model.dim=48 --set model.n_heads=4 --rows 7 --repeats 1", dir);
  unsetenv("MOXLAB_ISA");
  INFO(portable.out << portable.err);
  REQUIRE(portable.exit_code == 0);
  CHECK(portable.out.find("packed kernel portable") != std::string::npos);
  CHECK(portable.out.find("| W_O 48 -> 48 | 7 |") != std::string::npos);
}

TEST_CASE("The op profile counts each op by name and shapes, self time within total time", "[bench]") {
  const auto a = torch::randn({8, 8}), b = torch::randn({8, 4});
  const auto ops = moxlab::profile_ops(
      [&] {
        auto c = torch::matmul(a, b);  // matmul (composite) calls mm
        c = torch::mm(c.t(), c) + 1;
      },
      2);
  auto find = [&](const std::string& name) {
    for (const auto& op : ops)
      if (op.name == name) return op;
    FAIL("no op " << name);
    return moxlab::OpTime{};
  };
  CHECK(find("aten::mm [8x8] [8x4]").calls == 1);  // per call of the profiled function
  CHECK(find("aten::mm [4x8] [8x4]").calls == 1);
  const auto matmul = find("aten::matmul [8x8] [8x4]");
  CHECK(matmul.self_ms <= matmul.total_ms);
  CHECK(matmul.total_ms >= find("aten::mm [8x8] [8x4]").total_ms);  // its child's time is inside it
  for (std::size_t i = 1; i < ops.size(); ++i) CHECK(ops[i - 1].self_ms >= ops[i].self_ms);  // costliest first
  const auto table = moxlab::format_op_profile(ops, 2);
  CHECK(table.find("| (all ") != std::string::npos);
}

TEST_CASE("bench train times the execution forms side by side with the dense baseline", "[e2e][bench]") {
  const std::string dir = scratch_dir("bench_train");
  write_micro_config(dir, 10);
  const std::string mohd =
      " --set model.attention=mohd --set mohd.attn.sub_dims=4 --set mohd.attn.active=2 --set mohd.attn.shared=1"
      " --set model.ffn=mohd --set mohd.ffn.sub_dims=4 --set mohd.ffn.active=2 --set mohd.ffn.shared=1";
  auto r = run_cli("bench train --config micro.toml --set model.dim=48 --steps 1 --repeats 1 --vocab 64 --dense-baseline" + mohd, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // MoHD's three forms, then the dense model of the same shape; the first is the ratios' baseline.
  for (const char* row : {"| reference | ", "| automatic | ", "| sparse | ", "| dense, automatic | "})
    CHECK(r.out.find(row) != std::string::npos);
  CHECK(r.out.find("| vs reference |") != std::string::npos);
  CHECK(r.out.find("OpenBLAS core ") != std::string::npos);
  CHECK(r.out.find("packed kernels ") != std::string::npos);
  auto dense = run_cli("bench train --config micro.toml --steps 1 --repeats 1 --vocab 64 --forms automatic", dir);
  REQUIRE(dense.exit_code == 0);
  CHECK(dense.out.find("| automatic | ") != std::string::npos);
  CHECK(dense.out.find("| reference | ") == std::string::npos);
  auto bad = run_cli("bench train --config micro.toml --steps 1 --repeats 1 --vocab 64 --forms fast", dir);
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("--forms") != std::string::npos);
}

TEST_CASE("bench train times a trained checkpoint's weights when train.init_from names one", "[e2e][bench]") {
  const std::string dir = scratch_dir("bench_train_init_from");
  const std::string ck = train_micro_checkpoint(dir, 10);
  // The case's model holds the checkpoint's weights, not its own seeded draw.
  const moxlab::LoadedCheckpoint trained = moxlab::load_checkpoint(ck);
  moxlab::TrainCase from_ck(moxlab::load_config(dir + "/micro.toml", {"model.vocab_size=" + std::to_string(trained.config.model.vocab_size),
                                                                        "train.init_from=" + ck}));
  moxlab::Config own_draw = from_ck.cfg;
  own_draw.train.init_from.clear();
  moxlab::TrainCase fresh(own_draw);
  const auto loaded = trained.model->named_parameters(), timed = from_ck.model->named_parameters(), own = fresh.model->named_parameters();
  REQUIRE(timed.size() == loaded.size());
  bool any_differs_from_own = false;
  for (const auto& p : loaded) {
    CHECK(torch::equal(timed[p.key()], p.value()));
    any_differs_from_own = any_differs_from_own || !torch::equal(own[p.key()], p.value());
  }
  CHECK(any_differs_from_own);

  const std::string base = "bench train --config micro.toml --steps 1 --repeats 1 --forms automatic --vocab " +
                           std::to_string(trained.config.model.vocab_size);
  auto r = run_cli(base + " --set train.init_from=" + ck, dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("weights from " + ck + " (train.init_from); denormals flushed to zero") != std::string::npos);
  auto keep = run_cli(base + " --set execution.denormals=keep", dir);
  REQUIRE(keep.exit_code == 0);
  CHECK(keep.out.find("weights random (init seed 1); denormals kept") != std::string::npos);
  auto missing = run_cli(base + " --set train.init_from=missing.pt", dir);
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("missing.pt") != std::string::npos);
  auto sweep = run_cli(base + " --set train.init_from=sweep:a/dense", dir);
  CHECK(sweep.exit_code != 0);
  CHECK(sweep.err.find("takes a checkpoint path here") != std::string::npos);
}
