// MoHD attention (Eq. 14-15) and MoHD SwiGLU FFN (Eq. 16): the dense LLaMA component on the token's
// active sub-dimensions, wrapped by a MohdMixer (router, gate-weighted concatenation, scaling, Monarch
// fusion). Attention and FFN have separate routers with their own options (Sec. 4.5).
#pragma once
#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/model/ffn.h"
#include "core/model/mohd/mohd_mixer.h"

namespace moxlab {

class MohdAttention : public Attention {
 public:
  explicit MohdAttention(const ModelOptions& o);
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx, const BlockTapNames& taps) override;
  ParamCount param_count() const override;
  std::shared_ptr<DenseAttention> inner;
  MohdMixer mixer{nullptr};

 private:
  DerivedWeights fused_;   // W_Q, W_K, W_V stacked (and their biases) for the sparse form
  DerivedWeights packed_;  // the same stacked matrix packed, for the inference form
};

class MohdFeedForward : public FeedForward {
 public:
  explicit MohdFeedForward(const ModelOptions& o);
  torch::Tensor forward(const torch::Tensor& x, ForwardContext& ctx, const BlockTapNames& taps) override;
  ParamCount param_count() const override;
  std::shared_ptr<SwiGLU> inner;
  MohdMixer mixer{nullptr};

 private:
  DerivedWeights fused_;   // W_gate and W_up stacked for the sparse form
  DerivedWeights packed_;  // W_gate and W_up packed side by side (one SwiGLU product), for the inference form
};

}  // namespace moxlab
