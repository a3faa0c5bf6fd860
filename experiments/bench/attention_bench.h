// `moxlab bench attention`: the attention core alone (scores, softmax, value mix; no projections) at a
// model's shape, the one-pass inference kernel (kernels/fused/attention.h) against the torch form it
// replaces (dot_product_attention_torch), interleaved within each repeat in one process. Prefill: B x T
// queries on their own T keys (causal); decode: B single queries after `past` cached keys. GFLOP/s count
// the work each query row does: 4 x head_dim x the keys it sees (scores and mix, causal positions only).
#pragma once
#include <string>

#include "core/model/model_options.h"

namespace moxlab {

struct AttentionBenchOptions {
  int batch = 4, seq = 256, repeats = 7;
  double min_seconds = 0.15;
};

struct AttentionTiming {
  std::string what;  // "prefill B x T" or "decode after P"
  double flops = 0;  // per call
  double fused_ms = 0, torch_ms = 0;  // medians
};

// prefill at batch x seq, then one decode step at batch 1 after seq cached keys.
std::vector<AttentionTiming> run_attention_bench(const ModelOptions& m, const AttentionBenchOptions& o);
std::string format_attention_bench(const std::vector<AttentionTiming>& rows);

}  // namespace moxlab
