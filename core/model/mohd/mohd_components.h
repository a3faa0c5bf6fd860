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
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO& io) override;
  // forward's two steps, for forms that compute the second their own way: the routing (Eq. 11-12) with
  // its taps and balance loss recorded, then Eq. 14 given it.
  SubDimRouting route(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps);
  torch::Tensor forward_routed(const torch::Tensor& x, const SubDimRouting& r, const Rope& rope, Analysis& an,
                               const BlockTapNames& taps, LayerIO& io);
  ParamCount param_count() const override;
  std::shared_ptr<DenseAttention> inner;
  MohdMixer mixer{nullptr};
};

class MohdFeedForward : public FeedForward {
 public:
  explicit MohdFeedForward(const ModelOptions& o);
  torch::Tensor forward(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO& io) override;
  // forward's two steps (as MohdAttention's): the routing, then Eq. 16 given it.
  SubDimRouting route(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps);
  torch::Tensor forward_routed(const torch::Tensor& x, const SubDimRouting& r, Analysis& an, const BlockTapNames& taps, LayerIO& io);
  ParamCount param_count() const override;
  std::shared_ptr<SwiGLU> inner;
  MohdMixer mixer{nullptr};
};

// "blocks.3.attn.router.probs" -> "blocks.3.attn.balance": the name of a router's balance loss in the logs.
std::string balance_loss_name(const std::string& probs_tap);

}  // namespace moxlab
