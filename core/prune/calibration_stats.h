// What the pruning baselines calibrate on (NOTES.md, "Baselines"), from one pass over calibration
// batches of the dense model: per layer the L2 norm over tokens of every input channel of each dense
// matrix (Wanda's ||X_j||_2: attn.in for W_Q/W_K/W_V, attn.ctx for W_O, ffn.in for W_G/W_U, ffn.act for
// W_D), and ShortGPT's block influence BI_l = 1 - mean over tokens of cos(x_in, x_out) of each block.
#pragma once
#include <vector>

#include <torch/torch.h>

#include "core/model/transformer.h"

namespace moxlab {

struct LayerInputNorms {
  torch::Tensor attn_in, attn_ctx, ffn_in, ffn_act;  // [dim], [H * head_dim], [dim], [d_mid]
};

struct CalibrationStats {
  std::vector<LayerInputNorms> norms;   // per layer
  std::vector<double> block_influence;  // per layer
};

// batches: token windows [B, T + 1] (int64; the first T are the inputs, as for the Taylor loss). The model runs in eval mode without gradients.
CalibrationStats calibrate(Transformer& model, const std::vector<torch::Tensor>& batches);

}  // namespace moxlab
