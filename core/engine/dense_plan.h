// The engine's dense attention (core/model/attention.h) and SwiGLU (core/model/ffn.h): the same formulas
// on packed weights (kernels/fused/packed_matmul.h), with the fused RoPE, attention and SwiGLU kernels and
// a KV cache. The sparse kinds reuse its halves (MoH weights the heads between them, ToMoE masks them).
#pragma once
#include <tuple>

#include "core/engine/derived_weights.h"
#include "core/engine/layer_plan.h"
#include "core/model/attention.h"
#include "core/model/ffn.h"

namespace moxlab::engine {

class DenseAttentionPlan : public AttentionPlan {
 public:
  explicit DenseAttentionPlan(DenseAttention& a) : a_(a) {}
  torch::Tensor forward(const torch::Tensor& x, Step& step) override;

  // DenseAttention::head_outputs, attend and project (core/model/attention.h) on packed weights; attend
  // rotates at the cache's offset and attends to the cached positions too.
  torch::Tensor head_outputs(const torch::Tensor& x, Step& step, torch::Tensor* q_pre_rope = nullptr, const torch::Tensor& qk_mask = {});
  torch::Tensor attend(torch::Tensor q, torch::Tensor k, torch::Tensor v, Step& step, const torch::Tensor& qk_mask = {},
                       const torch::Tensor& gates = {});
  torch::Tensor project(const torch::Tensor& heads, Step& step);
  // x [B, T, dim] -> q [B, T, H * hd], k, v [B, T, Hkv * hd] from one product with W_Q, W_K, W_V stacked
  // and packed (torch's three products where packing does not apply: other dtypes and devices).
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> project_qkv(const torch::Tensor& x);
  DenseAttention& module() { return a_; }

 private:
  DenseAttention& a_;
  DerivedWeights stacked_;
};

class SwiGluPlan : public FeedForwardPlan {
 public:
  explicit SwiGluPlan(SwiGLU& f) : f_(f) {}
  torch::Tensor forward(const torch::Tensor& x, Step& step) override;

 private:
  SwiGLU& f_;
  DerivedWeights stacked_;  // W_gate and W_up packed side by side (one SwiGLU product), W_down packed
};

}  // namespace moxlab::engine
