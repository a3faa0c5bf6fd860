// A row's top-k as a 0/1 mask, for inference, in one pass over [M, N] scores: ToMoE's v/o router keeps
// each token's top-K head dimensions (Eq. 5's inference form), which torch's topk + scatter do as a sort
// per row and two more passes. Ties go to the lower index. float32 CPU; any scores layout (made contiguous).
#pragma once
#include <torch/torch.h>

namespace moxlab {

torch::Tensor top_k_mask(const torch::Tensor& scores, std::int64_t k);  // [..., N] -> float [..., N]

// The same on raw rows, on the calling thread: `rows` rows of n scores (contiguous) to rows of n mask
// values `mask_stride` floats apart (inside a caller's parallel region, with no tensors made).
void top_k_mask_rows(const float* scores, std::int64_t rows, std::int64_t n, std::int64_t k, float* mask, std::int64_t mask_stride);

}  // namespace moxlab
