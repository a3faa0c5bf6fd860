// Per-token block-sparse linear maps: the gathered form of MoHD's sliced matrices (Eq. 8, 14-16).
// The hidden dimension d is cut into N blocks of b = d / N; each token uses some blocks, the first
// `shared` for every token. An input-side matrix (W_Q, W_K, W_V, W_gate, W_up: [out, d]) then reads only
// the token's active input blocks, and an output-side matrix (W_O, W_down: [d, in]) produces only its
// active output blocks, so a layer using active/N of the blocks does active/N of the dense FLOPs.
// Shared blocks are one matmul over every token. The routed blocks are a grouped matmul, in one of two
// layouts chosen by BlockSelection::from_mask:
//   grouped:   tokens sorted by their set of routed blocks, so each set is a contiguous run of rows and
//              each of its blocks is one matmul accumulated in place (addmm) into that run; used when the
//              sets are few (MoHD's usual 3 shared + top-1 has N - shared sets);
//   per block: for each routed block the tokens using it, gathered, multiplied and scattered back
//              (index_add / index_copy); used when sets are many (e.g. 6 routed of 9).
// Rows of the maps' inputs and outputs are in the selection's row order: to_rows() puts a [M, ...]
// tensor in it, from_rows() takes it back (both identity in the per-block layout), so a chain of maps
// permutes once. Differentiable (autograd sees only standard ops).
#pragma once
#include <vector>

#include <torch/torch.h>

#include "kernels/fused/packed_matmul.h"

namespace moxlab {

struct BlockSelection {
  int blocks = 0;  // N
  int shared = 0;  // blocks 0..shared-1 are used by every token
  std::int64_t tokens = 0;  // M

  struct Group {
    std::int64_t start = 0, count = 0;  // a run of rows in the sorted order
    std::vector<int> blocks;            // its routed blocks
  };
  bool grouped = false;
  torch::Tensor order, inverse;      // grouped: row r holds token order[r]; token m sits at row inverse[m]
  bool identity = false;             // grouped with every token at its own row (a decode step's one token):
                                     // to_rows and from_rows return their input
  std::vector<Group> groups;         // grouped
  std::vector<torch::Tensor> users;  // per-block layout: for each block i >= shared, the tokens using it (int64)

  // active: [M, N] bool, with the first `shared` columns true for every token (checked). layout: "auto"
  // picks grouped when the runs need at most twice as many matmuls as the per-block form (the torch ops of
  // training); the packed inference products take "grouped" whatever the sets (short runs have their own
  // paths there: block_sparse_input_packed, block_sparse_output_to_tokens). parts > 1 (grouped
  // layout): the tokens cut into `parts` equal contiguous parts (the last shorter), each sorted on its own,
  // so rows [p * ceil(M / parts), ...) hold part p's tokens only; a set of blocks then has a run per part.
  static BlockSelection from_mask(const torch::Tensor& active, int shared, const std::string& layout = "auto", std::int64_t parts = 1);
  torch::Tensor to_rows(const torch::Tensor& per_token) const;
  torch::Tensor from_rows(const torch::Tensor& rows) const;
};

// x [M, d] (rows) -> x_s W^T (+ bias) [M, out] (rows), x_s = x with the token's inactive blocks zeroed.
torch::Tensor block_sparse_input_linear(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s,
                                        const torch::Tensor& bias = {});

// The same from x in token order (to_rows first).
torch::Tensor block_sparse_input_linear_from_tokens(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s,
                                                    const torch::Tensor& bias = {});

// Inference form of the input side in the grouped layout, on a weight packed once (kernels/fused/
// packed_matmul.h): x [M, K] in token order, each thread gathering its rows through the selection's order
// as the products read them, one product per group over its shared and routed input blocks (accumulated in
// registers). A SwiGLU packing gives SiLU(x_s G^T) * (x_s U^T) directly. Returns [M, n] in row order.
torch::Tensor block_sparse_input_packed(const torch::Tensor& x, const PackedWeight& w, const BlockSelection& s,
                                        const torch::Tensor& bias = {});

// h [M, k] (rows) -> [M, d] (rows): output block i of token m is scale[m, i] * (h_m W[block i]^T) when the token
// uses block i, 0 otherwise. scale: [M, N] in row order (MoHD: the gates times the activation scaling alpha).
torch::Tensor block_sparse_output_linear(const torch::Tensor& h, const torch::Tensor& w, const BlockSelection& s,
                                         const torch::Tensor& scale);

// Inference form of block_sparse_output_linear in the grouped layout, followed by Monarch's second factor
// (MoHD Eq. 9, as `mix` = monarch_mix_weights(b2), which callers keep across calls; undefined: none) and
// from_rows, as one pass over the rows after
// the products: the shared blocks' product and each group's routed blocks are written compactly, then
// each row's active blocks are scaled and mixed from there straight to its token's position (inactive
// blocks are zero, so the mix reads only the active ones: half its work for MoHD's 4 of 8). Saves the
// zero-filled [M, d] result, the scaling and placing copies, the mix's own pass over [M, d] and the
// un-permutation. The weight [d, k] comes packed block by block (pack_weight_blocks(w, d / N)), so each
// block's product runs on its own packing. Returns [M, d] in token order. CPU float32, no autograd.
torch::Tensor block_sparse_output_to_tokens(const torch::Tensor& h, const torch::Tensor& w_blocks, std::int64_t d,
                                            const BlockSelection& s, const torch::Tensor& scale, const torch::Tensor& mix = {});

}  // namespace moxlab
