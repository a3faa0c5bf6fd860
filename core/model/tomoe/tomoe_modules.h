// ToMoE's attention and FFN kinds ("tomoe"): the dense modules, with their weights and parameter names
// unchanged (a dense checkpoint loads as is and stays frozen), plus the routing modules that decide per
// token what they compute (section 3.2-3.3). Both read this layer's expert embeddings from the pass's
// TomoeTrace (the Transformer's hypernetwork, Eq. 1) and record their decisions there; with
// ctx.gates_off they are the dense model (the self-distillation teacher of Eq. 10).
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
  TomoeAttention(const ModelOptions& o, int layer);
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx, const BlockTapNames& taps) override;
  // This token's masks from the pass's expert embeddings (S_0 and S_t), recorded in ctx.tomoe.
  HeadDimMasks masks(const torch::Tensor& x, ForwardContext& ctx);
  HeadDimMasker masker{nullptr};

 private:
  int layer_;
};

// Eq. 2-3: the token's top-1 expert (ST-Gumbel-Softmax) picks that expert's channel mask inside SwiGLU.
class TomoeFeedForward : public SwiGLU {
 public:
  TomoeFeedForward(const ModelOptions& o, int layer);
  torch::Tensor forward(const torch::Tensor& x, ForwardContext& ctx, const BlockTapNames& taps) override;
  MlpExpertRouter expert_router{nullptr};

 private:
  int layer_;
};

}  // namespace moxlab
