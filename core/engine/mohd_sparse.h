// MoHD's sparse form (core/model/mohd/mohd_mixer.h): each matrix reads or writes only the token's active
// sub-dimension blocks (kernels/sparse/block_sparse_linear.h), Monarch's first factor folded into the
// output-side matrix. One implementation serves inference (packed weights, rows kept in routed order
// through attention) and training (autograd through the block-sparse products): each step takes its
// fused kernel only where the kernel's predicate holds (never with autograd), so with autograd this is
// the training form. Equal to the reference to rounding, gradients included (tests/engine).
#pragma once
#include <optional>

#include "core/engine/dense_plan.h"
#include "core/engine/derived_weights.h"
#include "core/model/mohd/mohd_components.h"
#include "kernels/sparse/block_sparse_linear.h"

namespace moxlab::engine {

// Which tokens use which blocks, and each active output block's weight g_i alpha.
struct MohdSparse {
  BlockSelection selection;
  torch::Tensor scale;  // [M, N], in the selection's row order
};
// Without autograd each thread's share of the tokens is grouped on its own (the rows a thread's products,
// RoPE, attention and output pass handle are its own tokens); with autograd one sort ("auto" layout).
MohdSparse mohd_sparse(const SubDimRouting& r, const MohdOptions& o);
// The sparse form where `step` takes it: forced, or automatic where the layout is grouped (few sets of
// routed blocks), for inference and training alike (docs/decisions/2026-11-25-sparse-forms-and-model-kernels.md).
std::optional<MohdSparse> mohd_sparse_if_wins(const SubDimRouting& r, const MohdOptions& o, const Step& step);

// The router's scores, softmax and top-k as one pass over packed centroids (kernels/sparse/sub_dim_topk.h)
// where it applies; SubDimRouter::forward otherwise.
class SubDimRoutePlan {
 public:
  explicit SubDimRoutePlan(SubDimRouterImpl& r) : r_(r) {}
  SubDimRouting forward(const torch::Tensor& x);

 private:
  SubDimRouterImpl& r_;
  DerivedWeights packed_;
};

// The output side: h [M, k] (rows in the selection's order) through the output-side matrix w [d, k],
// scaling and fusion -> [M, d] in token order; equals MohdMixer::combine of the dense output.
class MohdSparseOutput {
 public:
  explicit MohdSparseOutput(MohdMixerImpl& m) : m_(m) {}
  torch::Tensor forward(const torch::Tensor& h, const torch::Tensor& w, const MohdSparse& s);
  // MohdMixer::combine with the engine's Monarch mix.
  torch::Tensor combine(const torch::Tensor& y, const SubDimRouting& r);

 private:
  MohdMixerImpl& m_;
  DerivedWeights folds_;   // B1 w (a [d, d/groups, k] product)
  DerivedWeights packed_;  // the output-side matrix (folded or not) packed block by block
  DerivedWeights mix_;     // Monarch's second factor as the column mix reads it
};

// Eq. 14 in the sparse form: Q, K, V read only the active input blocks (one stacked matrix: a single
// grouped product), W_O writes only the active output blocks. `dense` attends (RoPE, KV cache).
class MohdSparseAttention {
 public:
  explicit MohdSparseAttention(MohdAttention& m) : m_(m), dense_(*m.inner), out_(*m.mixer) {}
  torch::Tensor forward(const torch::Tensor& x, const MohdSparse& s, Step& step);
  DenseAttentionPlan& dense() { return dense_; }
  MohdSparseOutput& output() { return out_; }

 private:
  MohdAttention& m_;
  DenseAttentionPlan dense_;
  MohdSparseOutput out_;
  DerivedWeights fused_;   // [W_Q; W_K; W_V] (and their biases)
  DerivedWeights packed_;  // the same, packed
};

// Eq. 16 in the sparse form: W_gate and W_up (one matrix) read only the active input blocks, W_down
// writes only the active output blocks.
class MohdSparseFeedForward {
 public:
  explicit MohdSparseFeedForward(MohdFeedForward& m) : m_(m), out_(*m.mixer) {}
  torch::Tensor forward(const torch::Tensor& x, const MohdSparse& s);
  MohdSparseOutput& output() { return out_; }

 private:
  MohdFeedForward& m_;
  MohdSparseOutput out_;
  DerivedWeights fused_;   // [W_gate; W_up]
  DerivedWeights packed_;  // W_gate and W_up packed side by side (one SwiGLU product)
};

}  // namespace moxlab::engine
