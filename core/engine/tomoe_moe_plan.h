// The converted ToMoE model's inference (core/model/tomoe/tomoe_moe_weights.h holds what it runs): the
// weights stay whole because other tokens read other dims: the v/o top-K masks each token's heads as the
// attention kernel stores them, and W_O multiplies only each token's kept dims (head_dim_masked_matmul)
// where the top-K keeps at most 5/8 of them. Each expert is cut to its own width and the tokens are
// dispatched to their expert. On CPU in float32, on weights packed once (kernels/fused/packed_matmul.h).
#pragma once
#include <vector>

#include <torch/torch.h>

#include "core/model/rope.h"
#include "core/model/tomoe/tomoe_moe_weights.h"
#include "kernels/fused/packed_matmul.h"

namespace moxlab {

struct KvCache;

class TomoeMoePlan {
 public:
  // Checks the weights (float32 on the CPU, every tensor there) and packs them.
  explicit TomoeMoePlan(TomoeMoeWeights weights);
  // tokens [B, T] -> logits [B, T, vocab] ([B, 1, vocab]: the last position's only); with a cache the
  // tokens follow its positions (incremental decoding).
  torch::Tensor forward(const torch::Tensor& tokens, KvCache* cache = nullptr, bool last_logits_only = false) const;
  // One layer's attention and MLP on their normalised input h [B, T, d] (without the residual), for
  // per-layer benchmarks; forward() is the blocks of these.
  torch::Tensor attention(int layer, const torch::Tensor& h, KvCache* cache = nullptr) const;
  torch::Tensor feed_forward(int layer, const torch::Tensor& h) const;

  const TomoeMoeWeights& weights() const { return w_; }
  const ModelOptions& options() const { return w_.options; }

 private:
  TomoeMoeWeights w_;
  // What forward() derives from the tensors once, packed for the kernel (kernels/fused/packed_matmul.h):
  // each layer's q/k rotation, its input projections stacked, W_O, the expert router and, per expert, its
  // gate and up rows cut to the expert's width (one SwiGLU product) and its down columns.
  std::vector<Rope> qk_rope_;               // per layer: the kept pairs' rotation
  struct AttentionWeights {
    PackedWeight in;          // [W_Q; W_K; W_V; Proj_E]: one product
    torch::Tensor in_bias;    // [0; Proj_E's bias]
    PackedWeight out;         // W_O: its columns in (dim, head) order (pack_head_dim_major) where out_by_dim
    bool out_by_dim = false;  // W_O multiplies each token's kept v/o dims only (head_dim_masked_matmul)
    PackedWeight decode;      // the v/o router's decoder (its bias: attn.vo_dec.bias)
  };
  std::vector<AttentionWeights> attn_;  // per layer
  std::vector<PackedWeight> router_;    // per layer: the MLP's expert router
  PackedWeight head_;                   // the output head
  struct Expert {
    PackedWeight gate_up;  // SwiGLU packing of the kept gate and up rows
    PackedWeight down;     // [d, width]
    std::int64_t width = 0;
  };
  std::vector<std::vector<Expert>> experts_;  // per layer, per expert
};

}  // namespace moxlab
