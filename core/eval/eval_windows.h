// The windows every stream evaluation scores (perplexity, KL to a reference): the first n tokens of a
// domain cut into non-overlapping windows of seq_len + 1 tokens (stride seq_len), batched; a shorter final
// window goes alone. Tokens 2..len of a window are predicted from the ones before it inside the window.
#pragma once
#include <cstdint>
#include <functional>

#include <torch/torch.h>

#include "core/data/shards/token_source.h"

namespace moxlab {

// Calls visit(windows [b, len] int64 on `device`, next_start) for each batch; next_start = where the next
// batch begins (n after the last), for progress.
void for_each_window_batch(const TokenSource& src, int domain, int seq_len, std::int64_t n, int batch_size,
                           const torch::Device& device,
                           const std::function<void(const torch::Tensor& windows, std::int64_t next_start)>& visit);

}  // namespace moxlab
