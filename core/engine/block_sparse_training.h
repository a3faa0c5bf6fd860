// MoHD's block-sparse products (Eq. 8, 14-16) with autograd on the packed kernels: the forward and both
// backward products each do active/N of the dense product's work (kernels/sparse/block_sparse_products.h),
// where the torch form (kernels/sparse/block_sparse_linear.h) runs a LibTorch matmul per run and block.
//   input side  y = x_s W^T:   dX = dY W on the active blocks only, dW = dY^T x_s block by block over the
//                             block's users;
//   output side u = h W_i^T on active blocks i:  dh = dU over active blocks W, dW_i = dU_i^T h over users.
// The weights are packed per call: in MoHD's sparse form they are computed in the pass (Q/K/V stacked,
// Monarch's B1 folded into W_O / W_down), so no packing outlives it. Equal to the torch form to rounding,
// forward and gradients (tests/engine/test_block_sparse_training.cpp, finite differences included).
#pragma once
#include <torch/torch.h>

#include "kernels/sparse/block_sparse_linear.h"

namespace moxlab::engine {

// Whether these products take a layer with hidden dimension d and weight w: float32 CPU and the grouped
// layout (else callers keep the torch form).
bool block_sparse_training_applies(const BlockSelection& s, const torch::Tensor& w, std::int64_t d);

// block_sparse_input_linear_from_tokens: x [M, d] in token order -> x_s W^T (+ bias) [M, n] in row order.
torch::Tensor block_sparse_input_training(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s,
                                          const torch::Tensor& bias = {});

// block_sparse_output_linear: h [M, k] and scale [M, N] in row order -> [M, d] in row order.
torch::Tensor block_sparse_output_training(const torch::Tensor& h, const torch::Tensor& w, const BlockSelection& s,
                                           const torch::Tensor& scale);

}  // namespace moxlab::engine
