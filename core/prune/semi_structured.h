// Wanda's N:M semi-structured pruning (Sun et al. 2024; NOTES.md): in every row of each dense matrix,
// within each group of M consecutive input columns, zero the N weights of smallest |W_ij| * ||X_j||_2.
// 2:4 keeps exactly half of the attention and SwiGLU matrices.
#pragma once
#include <torch/torch.h>

#include "core/model/transformer.h"
#include "core/prune/calibration_stats.h"

namespace moxlab {

// 0/1 mask of `score` [out, in] keeping the (m - n) largest of each group of m input columns; in % m == 0.
torch::Tensor n_m_mask(const torch::Tensor& score, int n, int m);

// Applies n:m pruning with Wanda scores to the seven dense matrices of every block.
void prune_n_m(Transformer& model, const CalibrationStats& stats, int n, int m);

}  // namespace moxlab
