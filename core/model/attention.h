// Attention: the pluggable interface every attention kind implements, and the dense grouped-query
// attention of LLaMA (Ainslie et al. 2023 GQA: head h reads key/value head h / (n_heads / n_kv_heads)).
// MoHD (sub-dimension routing), MoH (heads as experts) and ToMoE (head-dim masks) add their own kinds
// (core/model/model_kind.h).
#pragma once
#include <memory>

#include <torch/torch.h>

#include "core/model/analysis.h"
#include "core/model/layer_io.h"
#include "core/model/model_options.h"
#include "core/model/param_count.h"
#include "core/model/tap_recorder.h"
#include "core/model/rope.h"

namespace moxlab {

class Attention : public torch::nn::Module {
 public:
  // x: [B, T, dim], already normalised. Returns [B, T, dim] (after the output projection).
  virtual torch::Tensor forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps,
                                LayerIO& io) = 0;
  // Default: every parameter active for every token.
  virtual ParamCount param_count() const;
};

class DenseAttention : public Attention {
 public:
  explicit DenseAttention(const ModelOptions& o);
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps,
                        LayerIO& io) override;
  // The two halves of forward, for kinds that act between them (MoH weights the heads):
  // per-head outputs [B, T, H, head_dim] (taps attn.in, q, k, v; q_pre_rope receives the queries
  // [B, T, H, head_dim] before RoPE; qk_mask [head_dim], when given, multiplies queries and keys after RoPE,
  // as ToMoE's static mask does), then the output projection of the concatenated heads (taps attn.ctx, out).
  torch::Tensor head_outputs(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps,
                             torch::Tensor* q_pre_rope = nullptr, const torch::Tensor& qk_mask = {});
  torch::Tensor project(const torch::Tensor& heads, Analysis& an, const BlockTapNames& taps);
  // The middle of head_outputs: RoPE on q [B, T, H, hd] and k [B, T, Hkv, hd], the optional q/k mask, and
  // attention over v [B, T, Hkv, hd] -> per-head outputs [B, T, H, hd]. Sparse forms compute their own
  // q/k/v. gates [B, T, H], when given, weight each head's output (see dot_product_attention).
  torch::Tensor attend(torch::Tensor q, torch::Tensor k, torch::Tensor v, const Rope& rope, const torch::Tensor& qk_mask = {},
                       const torch::Tensor& gates = {}) const;
  int n_heads() const { return n_heads_; }
  int n_kv_heads() const { return n_kv_heads_; }
  int head_dim() const { return head_dim_; }
  bool causal() const { return causal_; }

  torch::nn::Linear wq{nullptr}, wk{nullptr}, wv{nullptr}, wo{nullptr};

 protected:
  int n_heads_, n_kv_heads_, head_dim_;
  bool causal_;
};

// Scaled dot-product attention, softmax(q k^T * scale) v, with a causal mask (decoders) or over every
// position (the ViT's patch tokens); q: [B, H, T, hq], k: [B, Hkv, T, hq], v: [B, Hkv, T, hd] with query
// head h reading key/value head h / (H / Hkv) (grouped-query attention); scale 0 means 1 / sqrt(hq)
// (ToMoE's exported q/k keep fewer dims but the model's 1 / sqrt(head_dim)).
// gates [B, T, H], when given, multiply each head's output at each position (MoH's Eq. 4 weighting);
// dim_scales [B, T, hd], when given, multiply each position's output dims in every head (ToMoE's v/o mask).
torch::Tensor dot_product_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                    double scale = 0, const torch::Tensor& gates = {}, const torch::Tensor& dim_scales = {});
// The attention itself (autograd, any device): 64-position causal query tiles of batched matmuls and softmax.
torch::Tensor dot_product_attention_torch(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                          double scale = 0);

}  // namespace moxlab
