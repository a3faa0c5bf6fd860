// Autoregressive generation on an inference plan: greedy (argmax, deterministic) or temperature sampling.
// The prompt runs once and each new token alone against a KV cache (core/engine/kv_cache.h) while the sequence fits
// model.max_seq_len; beyond it every step recomputes the last max_seq_len tokens (a sliding window).
// Stops after max_new_tokens or when the model emits one of stop_ids.
#pragma once
#include <cstdint>
#include <vector>

#include "core/engine/inference_plan.h"

namespace moxlab {

struct GenerateOptions {
  int max_new_tokens = 200;
  double temperature = 0.0;  // 0: greedy
  std::uint64_t seed = 0;
  std::vector<std::int32_t> stop_ids;
};

// prompt: token ids (typically starting with BOS). Returns only the new tokens.
std::vector<std::int32_t> generate(InferencePlan& plan, const std::vector<std::int32_t>& prompt,
                                   const GenerateOptions& opt);

}  // namespace moxlab
