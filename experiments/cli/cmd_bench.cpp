// `moxlab bench train --config FILE.toml [--steps N] [--repeats R]`
// Training throughput and model FLOP utilisation: tokens/s over timed optimiser steps (after warm-up)
// and MFU = achieved model FLOP/s / matmul peak measured in the same process. Batches are random token
// ids of the configured shape (throughput does not depend on the text). Medians over repeats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "core/config/config.h"
#include "core/model/torch_threads.h"
#include "core/model/transformer.h"
#include "experiments/cli/commands.h"
#include "kernels/matmul_peak.h"
#include "kernels/train_flops.h"

namespace moxlab::cli {

namespace {
struct BenchArgs {
  std::string config;
  std::vector<std::string> sets;
  int steps = 10, repeats = 3, vocab = 4096;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

void register_bench(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto a = std::make_shared<BenchArgs>();
  auto* train = bench->add_subcommand("train", "Training tokens/s and MFU against a measured matmul peak");
  train->add_option("--config", a->config, "TOML config")->required();
  train->add_option("--set", a->sets, "key=value override");
  train->add_option("--steps", a->steps, "timed steps per repeat")->check(CLI::PositiveNumber)->capture_default_str();
  train->add_option("--repeats", a->repeats, "repeats (median reported)")->check(CLI::PositiveNumber)->capture_default_str();
  train->add_option("--vocab", a->vocab, "vocab size when the config leaves it to the tokenizer")->capture_default_str();
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
    auto step = [&]() {
      opt.zero_grad();
      Transformer::lm_loss(model.forward(x), y).backward();
      torch::nn::utils::clip_grad_norm_(model.parameters(), t.grad_clip > 0 ? t.grad_clip : 1e9);
      opt.step();
    };
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
    std::printf("bench train: %s  threads %d  batch %d x seq %d  params %lld non-embedding\n", cfg.run.name.c_str(),
                threads, t.batch_size, t.seq_len, static_cast<long long>(pc.total));
    std::printf("  model FLOPs/token      %.3e (6N + 12*L*T*d)\n", flops_per_token);
    std::printf("  tokens/s (median of %d) %.0f   [min %.0f, max %.0f]\n", a->repeats, median(tps),
                *std::min_element(tps.begin(), tps.end()), *std::max_element(tps.begin(), tps.end()));
    std::printf("  matmul peak GFLOP/s     %.1f (1024^3 fp32 GEMM, best of 3, median over repeats)\n", median(peaks));
    std::printf("  achieved GFLOP/s        %.1f\n", median(tps) * flops_per_token / 1e9);
    std::printf("  MFU (median)            %.1f%%\n", 100.0 * median(mfu));
  });
}

}  // namespace moxlab::cli
