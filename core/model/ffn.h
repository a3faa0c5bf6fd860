// Feed-forward: the pluggable interface and LLaMA's SwiGLU (Shazeer 2020):
//   FFN(x) = W2 (SiLU(W1 x) ⊙ W3 x).
// Taps: ffn.gate = W1 x (before SiLU), ffn.up = W3 x, ffn.act = SiLU(W1 x) ⊙ W3 x, ffn.out = W2 act.
#pragma once
#include <memory>

#include <torch/torch.h>

#include "core/model/analysis.h"
#include "core/model/layer_io.h"
#include "core/model/model_options.h"
#include "core/model/param_count.h"
#include "core/model/tap_recorder.h"

namespace moxlab {

class FeedForward : public torch::nn::Module {
 public:
  // x: [B, T, dim], already normalised. Returns [B, T, dim].
  virtual torch::Tensor forward(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO& io) = 0;
  virtual ParamCount param_count() const;
};

class SwiGLU : public FeedForward {
 public:
  explicit SwiGLU(const ModelOptions& o);
  torch::Tensor forward(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO& io) override;
  torch::nn::Linear w1{nullptr}, w2{nullptr}, w3{nullptr};
};

}  // namespace moxlab
