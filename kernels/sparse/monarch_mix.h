// Monarch's second factor (MoHD Eq. 9: P^T B2 P) for inference, in one pass over the activations.
// x [n, groups * r] is a [groups, r] grid per row; column c of the grid is mixed by its own groups x groups
// block: y[n, k, c] = sum_j b2[c, k, j] x[n, j, c]. As a batched matmul this needs the grid transposed
// and back (two copies of the activations) and 48 tiny GEMMs at MoHD's shapes; here each output row is
// groups^2 vector multiply-adds along r, over contiguous memory. No autograd here: training's autograd
// function (core/engine/monarch_mix_training.h) runs its backward on the same mix (dx: the transposed
// blocks) and on monarch_mix_weight_grad (db2); tests hold both equal to the batched-matmul form.
#pragma once
#include <torch/torch.h>

namespace moxlab {

// x [n, groups * r] float32, b2 [r, groups, groups] -> [n, groups * r].
torch::Tensor monarch_column_mix(const torch::Tensor& x, const torch::Tensor& b2);

// The column mix's weight gradient: dy, x [n, groups * r] -> db2 [r, groups, groups],
// db2[c, k, j] = sum over rows m of dy[m, k, c] x[m, j, c] (the rows split across threads, each with its
// own accumulators, summed at the end).
torch::Tensor monarch_mix_weight_grad(const torch::Tensor& dy, const torch::Tensor& x, std::int64_t groups);

// The column mix's weights laid out for monarch_mix_row: [groups (k), groups (j), r (c)], contiguous.
torch::Tensor monarch_mix_weights(const torch::Tensor& b2);
// One row whose input is zero outside the listed column groups (MoHD's inactive blocks):
// y[k r + c] = sum over the inputs (j, x_j, s_j) of bt[k, j, c] s_j x_j[c], x_j the r values of group j
// and s_j its scale (MoHD's gate times alpha); y has groups * r values and does not overlap the inputs.
// Work: groups x inputs x r multiply-adds, on 16-float vectors where active_isa() is AVX-512.
struct MixInput {
  std::int64_t group;
  const float* x;
  float scale = 1.0f;
};
void monarch_mix_row(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups, std::int64_t r);

}  // namespace moxlab
