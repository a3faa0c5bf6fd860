// MoH attention (core/model/moh/moh_attention.h) as the engine runs it.
// The fused inference form (Eq. 4 computing only the heads each token selected): without
// autograd on float32 CPU. With the learned router (it reads x alone) the router runs first, so:
//   1. on each thread's rows, one packed product for K, V and the shared heads' queries, then each routed
//      head's queries for only the rows that selected it (the others zero);
//   2. the fused attention kernel over the selected (position, head) pairs, each output multiplied by its
//      gate (kernels/fused/attention.h);
//   3. on each thread's rows, W_O over the shared heads' columns, then each routed head's columns added
//      into only the rows that selected it (Eq. 4's weighted sum in the output projection).
// With the query-norm router (it reads every head's query) or a tap recorder (taps record whole tensors) step 1
// computes every query. Active multiply-adds per token and layer: (shared + K routed) / h of W_Q, W_O and
// the scores and value mixes, all of W_K and W_V.
// The head-gathered form (kernels/sparse/head_gathered_attention.h, with autograd: a training form when
// the form is forced to sparse) computes each head's queries, scores and output projection only for the
// tokens that selected it, in torch ops; it takes no KV cache. Slower than the reference in training, so
// never automatic (docs/decisions/2026-11-25-sparse-forms-and-model-kernels.md).
#pragma once
#include "core/engine/dense_plan.h"
#include "core/model/moh/moh_attention.h"

namespace moxlab::engine {

// HeadRouter::forward without autograd on float32 CPU: the learned projections as one packed product on
// each thread's rows, the softmaxes, top-K (ties to the lower index, as top_k_selection) and two-stage
// weights per row; the same values as the torch form (~15 small ops over [tokens, <= h] tensors, each its
// own pass and allocation). Elsewhere (autograd, other dtypes) the router's forward.
class HeadRouterPlan {
 public:
  explicit HeadRouterPlan(HeadRouterImpl& r) : r_(r) {}
  HeadRouting forward(const torch::Tensor& x, const torch::Tensor& q);

 private:
  HeadRouterImpl& r_;
  DerivedWeights stacked_;  // [W_r; W_s; W_h], packed
};

class MohAttentionPlan : public AttentionPlan {
 public:
  explicit MohAttentionPlan(MohAttention& m) : m_(m), dense_(m), router_(*m.head_router) {}
  torch::Tensor forward(const torch::Tensor& x, Step& step) override;

 private:
  torch::Tensor forward_fused(const torch::Tensor& x, Step& step);
  MohAttention& m_;
  DenseAttentionPlan dense_;
  HeadRouterPlan router_;
  DerivedWeights derived_;  // the fused form's packings
};

// Eq. 4 in the head-gathered form (the router's taps and balance loss recorded as in the reference).
torch::Tensor moh_head_gathered(MohAttention& m, const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps,
                                HeadRouterPlan& router);

}  // namespace moxlab::engine
