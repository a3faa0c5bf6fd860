// One pre-norm decoder block (LLaMA): h = x + Attn(RMSNorm(x)); y = h + FFN(RMSNorm(h)).
// Taps: resid.mid = h, resid.out = y (attention and FFN tap their own insides).
#pragma once
#include <memory>

#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/model/ffn.h"
#include "core/model/rmsnorm.h"

namespace moxlab {

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const ModelOptions& o, int layer);
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx);
  // The same with attn_norm(x) given, each residual add fused into the norm after it (add_rms_norm):
  // returns y and, when `next` is given (the next block's attention norm), next(y).
  struct Output {
    torch::Tensor y, y_normed;
  };
  Output forward(const torch::Tensor& x, const torch::Tensor& x_normed, const Rope& rope, ForwardContext& ctx, const RMSNormImpl* next);
  ParamCount param_count() const;

  RMSNorm attn_norm{nullptr}, ffn_norm{nullptr};
  std::shared_ptr<Attention> attn;
  std::shared_ptr<FeedForward> ffn;
  const BlockTapNames taps;
};
TORCH_MODULE(Block);

}  // namespace moxlab
