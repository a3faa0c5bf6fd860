// What one forward pass of a ToMoE model decided, layer by layer, and the regularisers of Eq. 10 computed
// from it. Attention and FFN modules write their masks and routes here; the Transformer turns them into
// R_P (Eq. 8), R_U (Eq. 6-7, 16) and R_L (Eq. 9) once every layer has run (R_P needs all layers at once);
// analyses read the same trace (widths, routes, union coverage).
#pragma once
#include <vector>

#include <torch/torch.h>

#include "core/model/model_options.h"
#include "core/model/tomoe/tomoe_regularisers.h"

namespace moxlab {

struct TomoeAttentionTrace {
  torch::Tensor qk;  // [head_dim] static q/k mask (straight-through 0/1); [B, T, head_dim] with per-token noise
  torch::Tensor vo;  // [B, T, head_dim] per-token v/o masks
};
struct TomoeMlpTrace {
  torch::Tensor route;         // [B, T, N] one-hot expert choice
  torch::Tensor probs;         // [B, T, N] router softmax
  torch::Tensor expert_masks;  // [N, d_mid] each expert's kept channels
};

struct TomoeTrace {
  torch::Tensor experts;                       // [L, N, d_e] this pass's expert embeddings (Eq. 1)
  std::vector<TomoeAttentionTrace> attention;  // per layer; undefined tensors where attention is dense
  std::vector<TomoeMlpTrace> mlp;              // per layer; undefined where the FFN is dense

  void reset(int layers) {
    attention.assign(static_cast<std::size_t>(layers), {});
    mlp.assign(static_cast<std::size_t>(layers), {});
  }
};

// T(d_MoE)'s shape of model options o.
TomoeShape tomoe_shape(const ModelOptions& o);
// Each layer's kept widths in this pass (Eq. 8's d_l): q/k from the static mask, v/o as the widest token,
// MLP as the widest expert; full widths where the module is dense.
std::vector<LayerWidths> tomoe_widths(const TomoeTrace& trace, const ModelOptions& o);

struct TomoeRegularisers {
  torch::Tensor param;       // R_P (Eq. 8)
  torch::Tensor union_term;  // R_U (Eq. 7) over the v/o unions (Eq. 6) and the MLP unions (Eq. 16)
  torch::Tensor load;        // R_L (Eq. 9), mean over MLP layers; undefined without ToMoE FFNs
  double active_ratio = 0;   // T(d_MoE) / T_total of this pass
};
TomoeRegularisers tomoe_regularisers(const TomoeTrace& trace, const ModelOptions& o);

}  // namespace moxlab
