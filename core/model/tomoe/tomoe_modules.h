// ToMoE's attention and FFN kinds ("tomoe"): the dense modules, with their weights and parameter names
// unchanged (a dense checkpoint loads as is and stays frozen), plus the routing modules that decide per
// token what they compute (section 3.2-3.3). Both read this layer's expert embeddings from their LayerIO
// (the Transformer's hypernetwork computes them, Eq. 1) and return their decisions there; with
// LayerIO::gates_off they are the dense model (the self-distillation teacher of Eq. 10).
#pragma once
#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/model/ffn.h"
#include "core/model/tomoe/head_dim_masks.h"
#include "core/model/tomoe/mlp_experts.h"

namespace moxlab {

// Eq. 4: sum_i [softmax(e(X W_Q,i) S_0 S_0^T e(X W_K,i)^T) X W_V,i S_t] S_t W_O,i — the static mask S_0 on
// queries and keys after RoPE (it is RoPE-paired, so before or after is the same), the token's S_t on its
// attention output before W_O (masking V by S_t and then the output by S_t again is the same 0/1 product).
class TomoeAttention : public DenseAttention {
 public:
  explicit TomoeAttention(const ModelOptions& o);
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO& io) override;
  // The tokens' masks (S_0 and S_t) from io's expert embeddings, also returned in io.tomoe_attention.
  HeadDimMasks masks(const torch::Tensor& x, LayerIO& io);
  HeadDimMasker masker{nullptr};
};

// Eq. 2-3: the token's top-1 expert (ST-Gumbel-Softmax) picks that expert's channel mask inside SwiGLU.
class TomoeFeedForward : public SwiGLU {
 public:
  explicit TomoeFeedForward(const ModelOptions& o);
  torch::Tensor forward(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO& io) override;
  MlpExpertRouter expert_router{nullptr};
};

}  // namespace moxlab
