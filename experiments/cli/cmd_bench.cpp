// `moxlab bench train --config FILE.toml [--steps N] [--repeats R]`
// `moxlab bench infer --config FILE.toml [--batch B] [--seq T] [--repeats R] [--variants a,b] [--tomoe-moe F] [--paired S]`
// `moxlab bench attention --config FILE.toml [--batch B] [--seq T] [--repeats R]`
// `moxlab bench matmul --config FILE.toml [--rows 1,64,128,512] [--repeats R]`
// Training throughput and model FLOP utilisation: tokens/s over timed optimiser steps (after warm-up)
// and MFU = achieved model FLOP/s / matmul peak measured in the same process. Batches are random token
// ids of the configured shape (throughput does not depend on the text). Medians over repeats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/engine/training_forms.h"
#include "kernels/runtime/torch_threads.h"
#include "core/model/transformer.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/option_checks.h"
#include "experiments/bench/attention_bench.h"
#include "kernels/runtime/cpu_features.h"
#include "experiments/bench/inference_bench.h"
#include "experiments/bench/fma_peak.h"
#include "experiments/bench/matmul_bench.h"
#include "experiments/bench/matmul_peak.h"
#include "experiments/bench/timing.h"
#include "experiments/bench/train_flops.h"

namespace moxlab::cli {

namespace {
// After the thread count in a bench's header line: whether the workers run pinned (torch_threads.h).
const char* pinned_note() { return threads_pinned() ? " (workers pinned)" : " (not pinned)"; }

struct BenchArgs {
  std::string config, python;
  std::vector<std::string> sets;
  int steps = 10, repeats = 3, vocab = 4096;
};

// Peak resident memory of this process so far, MiB (Linux reports ru_maxrss in KiB).
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

// Current resident memory, MiB (/proc/self/statm: pages).
double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1048576.0);
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
  train->callback([a]() {
    Config cfg = load_config(a->config, a->sets);
    if (cfg.model.vocab_size == 0) cfg.model.vocab_size = a->vocab;
    const int threads = set_torch_threads(cfg.train.threads);
    const auto& t = cfg.train;
    Transformer model(cfg.model);
    model.init_weights(1);
    model.train();
    torch::optim::AdamW opt(model.parameters(), torch::optim::AdamWOptions(t.lr).weight_decay(t.weight_decay));
    auto x = torch::randint(cfg.model.vocab_size, {t.batch_size, t.seq_len}, torch::kLong);
    auto y = torch::randint(cfg.model.vocab_size, {t.batch_size, t.seq_len}, torch::kLong);
    // The blocks in the forms the trainer computes them in (core/engine/training_forms.h), its losses too.
    const TrainingForms forms = training_forms(model.blocks, cfg.model, form_from_name(cfg.execution.form));
    auto step = [&]() {
      opt.zero_grad();
      Analysis an;
      auto loss = Transformer::lm_loss(model.forward(x, an, forms.pass()), y);
      if (auto aux = an.total_aux_loss(); aux.defined()) loss = loss + aux;
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model.parameters(), t.grad_clip > 0 ? t.grad_clip : 1e9);
      opt.step();
    };
    const double rss_before = rss_mib();
    for (int i = 0; i < 3; ++i) step();  // warm-up: allocator, thread pools
    const double tokens_per_step = static_cast<double>(t.batch_size) * t.seq_len;
    const double flops_per_token = train_flops_per_token(model, t.seq_len);
    std::vector<double> tps, mfu, peaks;
    for (int r = 0; r < a->repeats; ++r) {
      MatmulPeak peak = measure_matmul_peak(1024, 3, 0.2);  // interleaved with the model: same conditions
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < a->steps; ++i) step();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double rate = tokens_per_step * a->steps / s;
      tps.push_back(rate);
      peaks.push_back(peak.gflops);
      mfu.push_back(rate * flops_per_token / (peak.gflops * 1e9));
    }
    const ParamCount pc = count_parameters(model);
    std::printf("bench train: %s  threads %d%s  batch %d x seq %d  params %lld non-embedding\n", cfg.run.name.c_str(),
                threads, pinned_note(), t.batch_size, t.seq_len, static_cast<long long>(pc.total));
    std::printf("  model FLOPs/token      %.3e (6N + 12*L*T*d)\n", flops_per_token);
    std::printf("  tokens/s (median of %d) %.0f   [min %.0f, max %.0f]\n", a->repeats, median(tps),
                *std::min_element(tps.begin(), tps.end()), *std::max_element(tps.begin(), tps.end()));
    std::printf("  matmul peak GFLOP/s     %.1f (1024^3 fp32 GEMM, best of 3, median over repeats)\n", median(peaks));
    std::printf("  achieved GFLOP/s        %.1f\n", median(tps) * flops_per_token / 1e9);
    std::printf("  MFU (median)            %.1f%%\n", 100.0 * median(mfu));
    const FmaPeak fma = measure_fma_peak(threads);
    std::printf("  FMA peak GFLOP/s        AVX2 %.1f, AVX-512 %.1f (independent multiply-adds, all threads; 0: no such ISA)\n",
                fma.avx2_gflops, fma.avx512_gflops);
    if (fma.avx512_gflops > 0)
      std::printf("  MFU vs AVX-512 FMA peak %.1f%%\n", 100.0 * median(tps) * flops_per_token / (fma.avx512_gflops * 1e9));
    const double peak = peak_rss_mib();
    std::printf("  peak RSS                %.0f MiB (%.0f MiB before the first step; growth %.1f MiB per 1k tokens of batch,\n"
                "                          activations + gradients + optimiser state)\n",
                peak, rss_before, (peak - rss_before) / (tokens_per_step / 1000.0));
    if (!a->python.empty()) {
      const double py = python_tokens_per_second(a->python, cfg, threads, a->steps, a->repeats);
      std::printf("  Python PyTorch tokens/s %.0f (scripts/bench_train_pytorch.py, same shapes and protocol)\n", py);
      std::printf("  moxlab / PyTorch        %.2fx\n", median(tps) / py);
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
