// `moxlab bench train --config FILE.toml [--steps N] [--repeats R] [--forms a,b] [--dense-baseline] [--profile N] [--python PY]`
// `moxlab bench train --config FILE.toml --nproc N [--steps N] [--repeats R]` (data-parallel ranks vs one process)
// `moxlab bench infer --config FILE.toml [--batch B] [--seq T] [--repeats R] [--variants a,b] [--tomoe-moe F] [--paired S]`
// `moxlab bench attention --config FILE.toml [--batch B] [--seq T] [--repeats R]`
// `moxlab bench matmul --config FILE.toml [--rows 1,64,128,512] [--repeats R]`
// Training throughput of several execution forms side by side (experiments/bench/train_bench.h) against
// the GEMM and FMA peaks measured in the same process; the other benchmarks time inference.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>


#include "core/common/error.h"
#include "core/config/config.h"
#include "core/distributed/data_parallel.h"
#include "core/distributed/rank_env.h"
#include "core/engine/training_forms.h"
#include "kernels/runtime/denormals.h"
#include "kernels/runtime/torch_threads.h"
#include "core/model/transformer.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/cli/rank_launcher.h"
#include "experiments/bench/attention_bench.h"
#include "experiments/bench/data_parallel_bench.h"
#include "kernels/runtime/cpu_features.h"
#include "experiments/bench/inference_bench.h"
#include "experiments/bench/fma_peak.h"
#include "experiments/bench/matmul_bench.h"
#include "experiments/bench/matmul_peak.h"
#include "experiments/bench/timing.h"
#include "experiments/bench/train_bench.h"

namespace moxlab::cli {

namespace {
// After the thread count in a bench's header line: whether the workers run pinned (torch_threads.h).
const char* pinned_note() { return threads_pinned() ? " (workers pinned)" : " (not pinned)"; }

struct BenchArgs {
  std::string config, python;
  std::vector<std::string> sets, forms;
  int steps = 10, repeats = 3, vocab = 4096, profile_top = 0, nproc = 1;
  bool dense_baseline = false;
};

// One rank of `bench train --nproc N` (experiments/bench/data_parallel_bench.h); rank 0 prints.
void bench_data_parallel(const BenchArgs& a, const Config& cfg, const RankEnv& env) {
  DataParallelGroup group(env);
  TrainBenchOptions o;
  o.steps = a.steps;
  o.repeats = a.repeats;
  const DataParallelBenchResult r = run_data_parallel_bench(cfg, group, o);
  if (group.rank() != 0) return;
  const auto& t = cfg.train;
  const int n = group.world();
  Transformer shape(cfg.model);
  std::printf("bench train --nproc %d: %s  batch %d x seq %d per rank (global %d)  params %lld non-embedding  form %s\n", n,
              cfg.run.name.c_str(), t.batch_size, t.seq_len, n * t.batch_size, static_cast<long long>(count_parameters(shape).total),
              cfg.execution.form.c_str());
  std::printf("  CPU %s; packed kernels %s; %u cores online\n\n", cpu_model_name().c_str(), isa_name(active_isa()),
              static_cast<unsigned>(std::thread::hardware_concurrency()));
  std::printf("| case | tokens/s median [min, max] of %d | vs one process | communication share of a step |\n", a.repeats);
  std::printf("|---|---|---|---|\n");
  const double one = median(r.single_tokens_per_s), ranks = median(r.ranks_tokens_per_s);
  std::printf("| one process, %d threads, micro-batch %d | %.0f [%.0f, %.0f] | 1.00x | - |\n", n, n * t.batch_size, one,
              *std::min_element(r.single_tokens_per_s.begin(), r.single_tokens_per_s.end()),
              *std::max_element(r.single_tokens_per_s.begin(), r.single_tokens_per_s.end()));
  std::printf("| %d ranks x 1 thread (Gloo), micro-batch %d each | %.0f [%.0f, %.0f] | %.2fx | %.1f%% |\n", n, t.batch_size, ranks,
              *std::min_element(r.ranks_tokens_per_s.begin(), r.ranks_tokens_per_s.end()),
              *std::max_element(r.ranks_tokens_per_s.begin(), r.ranks_tokens_per_s.end()), ranks / one,
              100 * median(r.communication_share));
  std::printf("\n  Both take the same optimiser steps (global batch %d). The share is rank 0's time inside collectives\n"
              "  (gradient all-reduce, batch statistics, waiting for the slower rank) over its step time. On one machine the\n"
              "  ranks share its cores with each other: the comparison is the overhead of the data-parallel path, not a speedup.\n",
              n * t.batch_size);
}


// Runs scripts/bench_train_pytorch.py with the model's shapes and returns its median tokens/s.
double python_tokens_per_second(const std::string& python, const Config& cfg, int threads, int steps, int repeats) {
  const auto& m = cfg.model;
  const auto& t = cfg.train;
  require(m.ffn == "dense" && m.attention == "dense" && m.tie_embeddings && !m.qkv_bias && m.head_dim_override == 0,
          "bench train --python: the PyTorch baseline implements the dense tied-embedding model only");
  std::ostringstream cmd;
  cmd << python << " " << MOXLAB_SOURCE_DIR << "/scripts/bench_train_pytorch.py --dim " << m.dim << " --layers " << m.n_layers
      << " --heads " << m.n_heads << " --kv-heads " << m.n_kv_heads << " --ffn " << m.resolved_ffn_hidden() << " --vocab "
      << m.vocab_size << " --batch " << t.batch_size << " --seq " << t.seq_len << " --steps " << steps << " --repeats " << repeats
      << " --threads " << threads << " --lr " << t.lr << " 2>&1";
  FILE* pipe = popen(cmd.str().c_str(), "r");
  require(pipe != nullptr, "bench train --python: cannot run " + python);
  std::string output;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) output += buf;
  const int status = pclose(pipe);
  const auto at = output.find("tokens/s median ");
  require(status == 0 && at != std::string::npos, "bench train --python: the PyTorch baseline failed: " + output);
  return std::stod(output.substr(at + 16));
}

struct InferArgs {
  std::string config;
  std::vector<std::string> sets, variants, tomoe_files;
  int vocab = 8192;
  bool no_layers = false;
  InferenceBenchOptions bench;
};

struct AttentionArgs {
  std::string config;
  std::vector<std::string> sets;
  AttentionBenchOptions bench;
};

struct MatmulArgs {
  std::string config;
  std::vector<std::string> sets;
  MatmulBenchOptions bench;
};

}  // namespace

void register_bench(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto a = std::make_shared<BenchArgs>();
  auto* train = bench->add_subcommand("train", "Training tokens/s and MFU against a measured matmul peak");
  train->add_option("--config", a->config, "TOML config")->required()->check(non_empty_path());
  train->add_option("--set", a->sets, "key=value override");
  train->add_option("--steps", a->steps, "timed steps per repeat")->check(integer_in(1, 1 << 20))->capture_default_str();
  train->add_option("--repeats", a->repeats, "repeats (median reported)")->check(integer_in(1, 1000))->capture_default_str();
  train->add_option("--vocab", a->vocab, "vocab size when the config leaves it to the tokenizer")
      ->check(integer_in(2, 1 << 22))->capture_default_str();
  train->add_option("--python", a->python,
                    "also time the same model in Python PyTorch with this interpreter (Debian's /usr/bin/python3 with python3-torch)");
  train->add_option("--forms", a->forms, "execution forms to time side by side (default: reference, automatic, and sparse for MoHD / MoH)")
      ->delimiter(',')
      ->check(CLI::IsMember({"reference", "automatic", "sparse"}));
  train->add_flag("--dense-baseline", a->dense_baseline, "also time the dense model of the same shape (automatic form)");
  train->add_option("--profile", a->profile_top, "also list each case's N costliest ops in a training step (LibTorch profiler)")
      ->check(integer_in(1, 1000));
  train->add_option("--nproc", a->nproc, "time N data-parallel ranks (one thread each) against one process with N threads")
      ->check(integer_in(1, 256));
  train->callback([a]() {
    Config cfg = load_config(a->config, a->sets);
    if (cfg.model.vocab_size == 0) cfg.model.vocab_size = a->vocab;
    const RankEnv env = process_rank_env();
    if (a->nproc > 1) {
      require(a->forms.empty() && !a->dense_baseline && a->profile_top == 0 && a->python.empty(),
              "bench train --nproc times data-parallel ranks against one process; --forms, --dense-baseline, --profile and --python are for one process");
      std::vector<std::string> args{"bench", "train", "--config", a->config, "--vocab", std::to_string(a->vocab), "--steps",
                                    std::to_string(a->steps), "--repeats", std::to_string(a->repeats)};
      for (const auto& s : a->sets) args.insert(args.end(), {"--set", s});
      throw ExitRequest{launch_local_ranks(a->nproc, args)};
    }
    if (env.distributed()) {
      bench_data_parallel(*a, cfg, env);
      return;
    }
    const int threads = set_torch_threads(cfg.train.threads);
    const bool flush = cfg.execution.denormals == "flush";
    const bool flushed = set_flush_denormals(flush) && flush;
    const auto& t = cfg.train;
    std::vector<TrainBenchCase> cases;
    for (const auto& form : a->forms.empty() ? default_train_forms(cfg.model) : a->forms) {
      Config c = cfg;
      c.execution.form = form;
      cases.push_back({form, c});
    }
    if (a->dense_baseline) {
      Config c = cfg;
      c.model.attention = c.model.ffn = "dense";
      c.execution.form = "automatic";
      cases.push_back({"dense, automatic", c});
    }
    TrainBenchOptions o;
    o.steps = a->steps;
    o.repeats = a->repeats;
    o.profile_top = a->profile_top;
    const auto results = run_train_bench(cases, o);
    // The peaks after the runs, on the same threads: OpenBLAS's GEMM (what the reference form's products
    // run on), the packed kernel's, and the FMA units'.
    const MatmulPeak blas = measure_matmul_peak(1024, 3, 0.2), packed = measure_packed_matmul_peak(1024, 3, 0.2);
    // The FMA peak is the best of three: a slow phase of the machine lowers a measurement, never raises it.
    FmaPeak fma = measure_fma_peak(threads);
    for (int i = 0; i < 2; ++i) {
      const FmaPeak again = measure_fma_peak(threads);
      fma.avx2_gflops = std::max(fma.avx2_gflops, again.avx2_gflops);
      fma.avx512_gflops = std::max(fma.avx512_gflops, again.avx512_gflops);
    }
    const bool avx512 = active_isa() == Isa::avx512;
    const double fma_peak = avx512 ? fma.avx512_gflops : fma.avx2_gflops;
    Transformer shape(cfg.model);
    std::printf("bench train: %s  threads %d%s  batch %d x seq %d  params %lld non-embedding\n", cfg.run.name.c_str(), threads,
                pinned_note(), t.batch_size, t.seq_len, static_cast<long long>(count_parameters(shape).total));
    std::printf("  CPU %s; packed kernels %s; OpenBLAS core %s\n", cpu_model_name().c_str(), isa_name(active_isa()),
                blas_core_name().c_str());
    std::printf("  weights %s; denormals %s (execution.denormals)\n",
                t.init_from.empty() ? "random (init seed 1)" : ("from " + t.init_from + " (train.init_from)").c_str(),
                flushed ? "flushed to zero" : "kept");
    std::printf("  peaks (GFLOP/s, all threads): OpenBLAS 1024^3 GEMM %.1f, packed 1024^3 product %.1f, FMA %s %.1f (best of 3)\n\n",
                blas.gflops, packed.gflops, avx512 ? "AVX-512" : "AVX2", fma_peak);
    std::printf("| case | tokens/s median [min, max] of %d | vs %s | model GFLOP/s | of FMA peak | of packed GEMM | of OpenBLAS GEMM | memory MiB |\n",
                a->repeats, results.front().label.c_str());
    std::printf("|---|---|---|---|---|---|---|---|\n");
    const double first = median(results.front().tokens_per_s);
    double best = 0;
    for (const auto& r : results) {
      const double tps = median(r.tokens_per_s), gflops = tps * r.flops_per_token / 1e9;
      best = std::max(best, tps);
      std::printf("| %s | %.0f [%.0f, %.0f] | %.2fx | %.1f | %.1f%% | %.1f%% | %.1f%% | %.0f |\n", r.label.c_str(), tps,
                  *std::min_element(r.tokens_per_s.begin(), r.tokens_per_s.end()),
                  *std::max_element(r.tokens_per_s.begin(), r.tokens_per_s.end()), tps / first, gflops, 100 * gflops / fma_peak,
                  100 * gflops / packed.gflops, 100 * gflops / blas.gflops, r.rss_growth_mib);
    }
    std::printf("\n  model FLOPs/token: 6N + 12 L T d (train_flops.h); memory: resident growth while the case was built and\n"
                "  warmed up (its model, gradients, optimiser state, packings and the activations the allocator keeps; a later\n"
                "  case reuses what an earlier one freed, so only the first row is its case's whole footprint)\n");
    for (const auto& r : results)
      if (!r.profile.empty()) std::printf("\n%s: costliest ops per training step\n%s", r.label.c_str(), r.profile.c_str());
    if (!a->python.empty()) {
      // The peer under the environment's BLAS setting, then with OpenBLAS's AVX-512 kernels where the CPU has them.
      std::vector<std::pair<std::string, std::string>> peers = {{"environment's BLAS setting", ""}};
      if (cpu_supports(Isa::avx512)) peers.push_back({"OPENBLAS_CORETYPE=SkylakeX", "OPENBLAS_CORETYPE=SkylakeX "});
      for (const auto& [what, env] : peers) {
        const double py = python_tokens_per_second(env + a->python, cfg, threads, a->steps, a->repeats);
        std::printf("  Python PyTorch eager, %s: %.0f tokens/s; moxlab's best case / it: %.2fx\n", what.c_str(), py, best / py);
      }
    }
  });

  auto i = std::make_shared<InferArgs>();
  auto* infer = bench->add_subcommand("infer", "Inference latency: dense vs MoHD, MoH and ToMoE variants of one base model");
  infer->add_option("--config", i->config, "TOML config: the base (dense) model shape and train.threads")->required()->check(non_empty_path());
  infer->add_option("--set", i->sets, "key=value override");
  infer->add_option("--batch", i->bench.batch, "prefill batch size")->check(integer_in(1, 1 << 16))->capture_default_str();
  infer->add_option("--seq", i->bench.seq, "prefill sequence length")->check(integer_in(1, 1 << 20))->capture_default_str();
  infer->add_option("--repeats", i->bench.repeats, "repeats (medians reported)")->check(integer_in(1, 1000))->capture_default_str();
  infer->add_option("--variants", i->variants, "subset of mohd_50,mohd_75,moh_75,moh_50,tomoe_50,tomoe_40 (dense always runs, first)")
      ->delimiter(',');
  infer->add_option("--tomoe-moe", i->tomoe_files, "also time a real ToMoE export (moxlab export --format tomoe-moe)")
      ->check(CLI::ExistingFile);
  infer->add_option("--vocab", i->vocab, "vocab size when the config leaves it to the tokenizer")
      ->check(integer_in(2, 1 << 22))->capture_default_str();
  infer->add_flag("--no-layers", i->no_layers, "skip the per-layer timings");
  infer->add_option("--paired", i->bench.paired_seconds,
                    "also time each variant's prefill against dense's in adjacent calls, alternating, for this many seconds "
                    "(median and quartiles of the per-pair speedups)")
      ->check(number_in(0, 86400));
  infer->add_option("--profile", i->bench.profile_top, "also list each variant's N costliest ops in prefill (LibTorch profiler)")
      ->check(integer_in(0, 10000));
  infer->callback([i]() {
    Config cfg = load_config(i->config, i->sets);
    if (cfg.model.vocab_size == 0) cfg.model.vocab_size = i->vocab;
    const int threads = set_torch_threads(cfg.train.threads);
    // Dense first (the baseline), then the requested variants in the standard order; all by default.
    std::vector<std::string> names = {"dense"};
    for (const auto& v : i->variants)
      if (std::find(standard_variant_names().begin(), standard_variant_names().end(), v) == standard_variant_names().end())
        throw Error("bench infer: unknown variant '" + v + "'");
    for (const auto& n : standard_variant_names())
      if (n != "dense" && (i->variants.empty() || std::find(i->variants.begin(), i->variants.end(), n) != i->variants.end()))
        names.push_back(n);
    std::vector<InferenceCase> cases = standard_inference_cases(cfg.model, names);
    for (const auto& f : i->tomoe_files) {
      InferenceCase c;
      c.name = "tomoe:" + std::filesystem::path(f).filename().string();
      c.tomoe_file = f;
      cases.push_back(c);
    }
    i->bench.per_layer = !i->no_layers;
    const auto& m = cfg.model;
    std::printf("bench infer: %s  dim %d, %d layers, %d heads (%d kv), FFN %d, vocab %d  threads %d%s\n\n", cfg.run.name.c_str(), m.dim,
                m.n_layers, m.n_heads, m.n_kv_heads, m.resolved_ffn_hidden(), m.vocab_size, threads, pinned_note());
    std::fflush(stdout);
    const auto rows = run_inference_bench(cases, i->bench);
    std::printf("%s", format_inference_bench(rows, i->bench).c_str());
  });

  auto at = std::make_shared<AttentionArgs>();
  auto* attn = bench->add_subcommand("attention", "The attention core alone: the fused inference kernel vs the torch form");
  attn->add_option("--config", at->config, "TOML config: the model shape (heads, KV heads, head width) and train.threads")->required()->check(non_empty_path());
  attn->add_option("--set", at->sets, "key=value override");
  attn->add_option("--batch", at->bench.batch, "prefill batch size")->check(integer_in(1, 1 << 16))->capture_default_str();
  attn->add_option("--seq", at->bench.seq, "prefill length (and the decode step's cached keys)")->check(integer_in(1, 1 << 20))->capture_default_str();
  attn->add_option("--repeats", at->bench.repeats, "repeats (medians reported)")->check(integer_in(1, 1000))->capture_default_str();
  attn->callback([at]() {
    const Config cfg = load_config(at->config, at->sets);
    const int threads = set_torch_threads(cfg.train.threads);
    const auto& m = cfg.model;
    std::printf("bench attention: %d heads (%d kv), head_dim %d, causal  threads %d%s\n\n", m.n_heads, m.n_kv_heads, m.head_dim(), threads, pinned_note());
    std::printf("%s", format_attention_bench(run_attention_bench(m, at->bench)).c_str());
  });

  auto mm = std::make_shared<MatmulArgs>();
  auto* matmul = bench->add_subcommand("matmul", "The packed-weight products vs torch::mm at a model's shapes, one thread");
  matmul->add_option("--config", mm->config, "TOML config: the model shape (dim, heads, KV heads, FFN width)")->required()->check(non_empty_path());
  matmul->add_option("--set", mm->sets, "key=value override");
  matmul->add_option("--rows", mm->bench.rows, "row counts")->delimiter(',')->check(integer_in(1, 1 << 20))->capture_default_str();
  matmul->add_option("--repeats", mm->bench.repeats, "repeats (medians reported)")->check(integer_in(1, 1000))->capture_default_str();
  matmul->callback([mm]() {
    const Config cfg = load_config(mm->config, mm->sets);
    const auto& m = cfg.model;
    const FmaPeak fma = measure_fma_peak(1);
    std::printf("bench matmul: dim %d, %d heads (%d kv), FFN %d  one thread, packed kernel %s; FMA peak per thread: AVX2 %.1f, AVX-512 %.1f GFLOP/s\n\n",
                m.dim, m.n_heads, m.n_kv_heads, m.resolved_ffn_hidden(), isa_name(active_isa()),
                fma.avx2_gflops, fma.avx512_gflops);
    std::printf("%s", format_matmul_bench(run_matmul_bench(m, mm->bench)).c_str());
  });
}

}  // namespace moxlab::cli
