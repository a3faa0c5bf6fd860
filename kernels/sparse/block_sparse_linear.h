// Per-token block-sparse linear maps: the gathered form of MoHD's sliced matrices (Eq. 8, 14-16).
// The hidden dimension d is cut into N blocks of b = d / N; each token uses some blocks, the first
// `shared` for every token. An input-side matrix (W_Q, W_K, W_V, W_gate, W_up: [out, d]) then reads only
// the token's active input blocks, and an output-side matrix (W_O, W_down: [d, in]) produces only its
// active output blocks, so a layer using active/N of the blocks does active/N of the dense FLOPs.
// Shared blocks are one matmul over every token; each specialised block is one matmul over the tokens
// that picked it (a grouped matmul), accumulated with index_add / index_copy. Differentiable (autograd
// sees only standard ops), so the same code serves inference and the training forward.
#pragma once
#include <vector>

#include <torch/torch.h>

namespace moxlab {

// Which tokens use which blocks, computed once per routing and shared by every matrix of the layer.
struct BlockSelection {
  int blocks = 0;  // N
  int shared = 0;  // blocks 0..shared-1 are used by every token
  std::int64_t tokens = 0;  // M
  std::vector<torch::Tensor> users;  // per block i >= shared: int64 indices of the tokens using it

  // active: [M, N] bool, with the first `shared` columns true for every token (checked).
  static BlockSelection from_mask(const torch::Tensor& active, int shared);
};

// x [M, d] -> x_s W^T (+ bias) [M, out], x_s = x with the token's inactive blocks zeroed.
torch::Tensor block_sparse_input_linear(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s,
                                        const torch::Tensor& bias = {});

// h [M, k] -> [M, d]: output block i of token m is scale[m, i] * (h_m W[block i]^T) when the token uses block
// i, 0 otherwise. scale: [M, N] (MoHD: the gates times the activation scaling alpha).
torch::Tensor block_sparse_output_linear(const torch::Tensor& h, const torch::Tensor& w, const BlockSelection& s,
                                         const torch::Tensor& scale);

}  // namespace moxlab
