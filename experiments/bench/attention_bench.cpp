#include "experiments/bench/attention_bench.h"

#include <cstdio>
#include <vector>

#include <torch/torch.h>

#include "core/model/attention.h"
#include "kernels/fused/attention.h"
#include "experiments/bench/timing.h"

namespace moxlab {

namespace {

AttentionTiming time_case(const ModelOptions& m, int batch, int queries, int past, const AttentionBenchOptions& o) {
  torch::NoGradGuard no_grad;
  const int hd = m.head_dim(), keys = queries + past;
  // Token-major projections viewed head-major, as the attention modules pass them.
  const auto q = torch::randn({batch, queries, m.n_heads, hd}).transpose(1, 2);
  const auto k = torch::randn({batch, keys, m.n_kv_heads, hd}).transpose(1, 2);
  const auto v = torch::randn({batch, keys, m.n_kv_heads, hd}).transpose(1, 2);
  AttentionTiming t;
  t.what = past == 0 ? "prefill " + std::to_string(batch) + " x " + std::to_string(queries)
                     : "decode after " + std::to_string(past);
  for (int i = 0; i < queries; ++i) t.flops += 4.0 * hd * (past + i + 1);
  t.flops *= static_cast<double>(batch) * m.n_heads;
  TORCH_CHECK(attention_fusable(q, k, v), "bench attention: the fused kernel does not apply to this shape (head_dim % 8)");
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const auto fused = [&] { attention_inference(q, k, v, true, scale); };
  const auto reference = [&] { dot_product_attention_torch(q, k, v, true, scale); };
  fused();
  reference();
  std::vector<double> f, r;
  for (int i = 0; i < o.repeats; ++i) {
    f.push_back(1e3 * seconds_per_call(fused, o.min_seconds));
    r.push_back(1e3 * seconds_per_call(reference, o.min_seconds));
  }
  t.fused_ms = median(f);
  t.torch_ms = median(r);
  return t;
}

}  // namespace

std::vector<AttentionTiming> run_attention_bench(const ModelOptions& m, const AttentionBenchOptions& o) {
  return {time_case(m, o.batch, o.seq, 0, o), time_case(m, 1, 1, o.seq, o)};
}

std::string format_attention_bench(const std::vector<AttentionTiming>& rows) {
  std::string s = "| case | fused ms | fused GFLOP/s | torch form ms | torch form GFLOP/s | speedup |\n|---|---|---|---|---|---|\n";
  char line[256];
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "| %s | %.4f | %.1f | %.4f | %.1f | %.2fx |\n", r.what.c_str(), r.fused_ms,
                  r.flops / (r.fused_ms * 1e6), r.torch_ms, r.flops / (r.torch_ms * 1e6), r.torch_ms / r.fused_ms);
    s += line;
  }
  return s;
}

}  // namespace moxlab
