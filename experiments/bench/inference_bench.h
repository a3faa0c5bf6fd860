// `moxlab bench infer`: inference latency of the dense model and its sparse variants (MoHD 50/75%,
// MoH 75/50% of heads, ToMoE 50/40%) on the same base shape, in one process:
//   prefill: a prompt batch [B, T] to its next-token logits (the output head on the last position only,
//            as before generation; the keys and values it computes are what the KV cache would hold);
//   forward: the same batch with every position's logits (scoring, perplexity, zero-shot evaluation);
//   decode:  batch 1, the token after a T-token prompt held in the KV cache;
//   layer 0's attention and FFN alone at the prefill shape;
//   optionally, prefill speedups from pairs of adjacent calls (dense and the variant alternating).
// Variants are timed round-robin within every repeat (drift hits all alike); medians are reported,
// speedups are dense median / variant median, and the ideal speedup is the ratio of forward FLOPs per
// token (2 x activated matmul parameters, the output head counted for the positions that run it, +
// attention scores and mixing over the context, PaLM App. B without the causal discount). The model rows
// time the default (automatic) form; MoHD and MoH are also timed in their reference (dense-compute) form
// and their forced sparse form.
#pragma once
#include <string>
#include <vector>

#include "core/model/model_options.h"
#include "experiments/bench/op_profile.h"

namespace moxlab {

struct InferenceCase {
  std::string name;
  ModelOptions options;     // the Transformer variant (unused when tomoe_keep > 0 or tomoe_file is set)
  double tomoe_keep = 0;    // > 0: a converted ToMoE model of this kept fraction (random weights)
  std::string tomoe_file;   // a real ToMoE export (moxlab export --format tomoe-moe)
};

// dense, mohd_50 (4 of 8 sub-dims, 3 shared), mohd_75 (9 of 12, 3 shared), moh_75 / moh_50 (3/4 and 1/2 of
// the heads, a quarter shared), tomoe_50, tomoe_40, in this order.
const std::vector<std::string>& standard_variant_names();
// The named variants of base; MoHD needs dim divisible by its sub-dimension count, MoH n_heads by 4 (a
// one-line error names the variant otherwise, as it does an unknown name).
std::vector<InferenceCase> standard_inference_cases(const ModelOptions& base, const std::vector<std::string>& names);

struct InferenceBenchOptions {
  int batch = 4, seq = 256;  // prefill shape
  int repeats = 7;
  double min_seconds = 0.15;  // each timing repeats the forward until this much time has passed
  bool per_layer = true;
  int profile_top = 0;  // > 0: also profile each variant's default prefill op by op and list this many ops
  // > 0: also time each variant's prefill against dense's call by call, alternating (dense first, then the
  // variant first) for this many seconds per variant: each pair's ratio sees the same machine state, so
  // their median is a steadier speedup than the ratio of medians on a machine that drifts between phases.
  double paired_seconds = 0;
};

struct InferenceRow {
  std::string name;
  double active_fraction = 1;  // activated non-embedding parameters / the first (dense) case's
  // Forward FLOPs per token: prefill (output head on one position per sequence), forward (on every
  // position), decode (one token, T + 1 keys)
  double flops_prefill = 0, flops_forward = 0, flops_decode = 0;
  double prefill_ms = 0, forward_ms = 0, decode_ms = 0;  // medians (forward: every position's logits)
  double prefill_reference_ms = 0, decode_reference_ms = 0;  // 0: no separate reference form
  double prefill_sparse_ms = 0, decode_sparse_ms = 0;        // forced sparse form (MoHD, MoH)
  double attn_ms = 0, ffn_ms = 0;              // layer 0 at the prefill shape, sparse form
  double attn_reference_ms = 0, ffn_reference_ms = 0;
  std::vector<double> prefill_samples;
  std::vector<double> paired_speedups;  // with paired_seconds: dense / variant prefill time of each adjacent pair
  std::vector<OpTime> prefill_ops;  // with profile_top: the default prefill, op by op
};

std::vector<InferenceRow> run_inference_bench(const std::vector<InferenceCase>& cases, const InferenceBenchOptions& o);

// Markdown tables (model and per layer) with speedups against the first row.
std::string format_inference_bench(const std::vector<InferenceRow>& rows, const InferenceBenchOptions& o);

}  // namespace moxlab
