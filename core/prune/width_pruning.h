// Static structured width pruning in ToMoE's parameterisation, the baselines of ToMoE's Table 1/3 at the
// same active-parameter ratio: per layer keep the same fraction of (a) query/key head-dimension RoPE pairs
// (shared by all heads, like ToMoE's S_0), (b) value/output head dimensions (like S_t, but one static set),
// (c) SwiGLU channels. A structure's score is the sum of an importance over the weights it owns:
//   magnitude: W^2 (the group's squared L2 norm);
//   wanda:     |W_ij| * ||X_j||_2 (Wanda, Sun et al. 2024; X the matrix's input over calibration tokens);
//   taylor:    |W_ij * dL/dW_ij| (first-order Taylor, LLM-Pruner, Ma et al. 2023; L the LM loss summed
//              over calibration batches).
// Pruned structures are zeroed in the dense weights (q/k rows of both RoPE members, v rows and W_O
// columns, W_G/W_U rows and W_D columns): the same function as the smaller model.
#pragma once
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/model/transformer.h"
#include "core/prune/calibration_stats.h"

namespace moxlab {

// Per layer: the importance of each weight of the seven dense matrices (same shapes as the weights).
struct LayerImportance {
  torch::Tensor wq, wk, wv, wo, w1, w2, w3;
};
std::vector<LayerImportance> magnitude_importance(Transformer& model);
std::vector<LayerImportance> wanda_importance(Transformer& model, const CalibrationStats& stats);
// batches: token windows [B, T + 1]; gradients of the next-token loss, summed over batches.
std::vector<LayerImportance> taylor_importance(Transformer& model, const std::vector<torch::Tensor>& batches);

struct LayerScores {
  torch::Tensor qk_pairs;  // [head_dim / 2]
  torch::Tensor vo_dims;   // [head_dim]
  torch::Tensor channels;  // [d_mid]
};
std::vector<LayerScores> structure_scores(const std::vector<LayerImportance>& importance, const ModelOptions& o);

struct LayerKeep {
  torch::Tensor qk;   // [head_dim] 0/1, RoPE pairs together
  torch::Tensor vo;   // [head_dim] 0/1
  torch::Tensor mlp;  // [d_mid] 0/1
};
// Keeps the round(ratio * count) best structures of each kind in every layer (at least one).
std::vector<LayerKeep> keep_best(const std::vector<LayerScores>& scores, double ratio);

// Zeroes every pruned structure's weights in place.
void apply_width_pruning(Transformer& model, const std::vector<LayerKeep>& keep);

// T(kept widths) / T_total (ToMoE Eq. 8's accounting).
double width_active_ratio(const ModelOptions& o, const std::vector<LayerKeep>& keep);

}  // namespace moxlab
