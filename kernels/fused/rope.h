// RoPE (Su et al. 2021) for inference in one pass: each consecutive pair (x0, x1) of every head at
// position start + t becomes (x0 cos - x1 sin, x0 sin + x1 cos), cos / sin of the pair's own frequency,
// instead of two selects, four products, a sum, a difference and a stack. x [B, T, heads, d] float32 CPU
// with the last dimension contiguous (any other strides: MoHD's q/k are views of one Q/K/V product);
// cos / sin [positions, d / 2] contiguous. Returns a contiguous [B, T, heads, d]. No autograd. With
// `positions` (int64, B x T) row (b, t) is at positions[b * T + t] instead (tokens held in another order).
#pragma once
#include <torch/torch.h>

namespace moxlab {

bool rope_fusable(const torch::Tensor& x, const torch::Tensor& cos);
torch::Tensor rope_inference(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, std::int64_t start,
                             const torch::Tensor& positions = {});

}  // namespace moxlab
