// The part MoHD adds around a component (attention or FFN): the router, the input restricted to the
// token's active sub-dimensions (x_s, Eq. 8), and on the output the gate-weighted concatenation of the
// active output sub-dimensions, activation scaling alpha = N * sum(active g) (Sec. 4.2) and Monarch
// group fusion back to d (Eq. 9-10):  y = M alpha ||_i g_i Dim_i(x_s).
//
// Slicing a matrix along the hidden dimension and keeping sub-dimension i means: input-side matrices
// (W_Q, W_K, W_V, W_gate, W_up) read only the active input blocks, output-side ones (W_O, W_down) produce
// only the active output blocks. Both equal the dense matrix applied to the masked input, with the
// output masked, so the reference form runs the dense component on x_s and weights its output blocks.
// The sparse form (ForwardContext::sparse_kernels) reads and writes only the active blocks
// (kernels/sparse/block_sparse_linear.h) and folds Monarch's first factor into the output-side matrix;
// tests hold it equal to the reference. Eq. 14-16 also write the gates inside
// the up-projections; we apply them once, on the concatenated output, as the general Eq. 8/10 do.
#pragma once
#include <optional>
#include <string>

#include <torch/torch.h>

#include "core/model/derived_weights.h"
#include "core/model/forward_context.h"
#include "core/model/mohd/monarch.h"
#include "core/model/mohd/mohd_options.h"
#include "core/model/mohd/sub_dim_router.h"
#include "core/model/param_count.h"
#include "kernels/sparse/block_sparse_linear.h"

namespace moxlab {

class MohdMixerImpl : public torch::nn::Module {
 public:
  MohdMixerImpl(int dim, const MohdOptions& o);

  // Routes x [B, T, d]; records the router taps and the balance loss (named `name`) in ctx.
  SubDimRouting route(const torch::Tensor& x, ForwardContext& ctx, const std::string& name, const std::string& probs_tap,
               const std::string& topk_tap);
  // x_s: x with the token's inactive sub-dimension blocks zeroed (Eq. 8).
  torch::Tensor mask_input(const torch::Tensor& x, const SubDimRouting& routing) const;
  // y [B, T, d]: the dense component's output on x_s -> M alpha (g-weighted active blocks).
  torch::Tensor combine(const torch::Tensor& y, const SubDimRouting& routing);

  // The sparse form: which tokens use which blocks, and each active output block's weight g_i alpha.
  struct Sparse {
    BlockSelection selection;
    torch::Tensor scale;  // [M, N], in the selection's row order
  };
  Sparse sparse(const SubDimRouting& routing) const;
  // The sparse form when ctx asks for it; in automatic mode only with the grouped layout (few sets of routed
  // blocks), which is where it beats the reference form
  // (docs/decisions/2026-11-25-sparse-forms-and-model-kernels.md).
  std::optional<Sparse> sparse_if_wins(const SubDimRouting& routing, const ForwardContext& ctx) const;
  // h [M, k] through the output-side matrix w [d, k], then scaling and fusion: equals combine() of the
  // dense component's output, computing only the active output blocks (B1 folded into w when aligned).
  // Input-side matrices take block_sparse_input_linear(x, w, selection). Rows of h and x are in the
  // selection's row order (Sparse::selection.to_rows), the result in token order. Without autograd the
  // scaling, fusion and un-permutation are one pass (block_sparse_output_to_tokens).
  torch::Tensor sparse_output(const torch::Tensor& h, const torch::Tensor& w, const Sparse& s);

  // Parameters of a component wrapped by this mixer: matrices active in active/N, router and fusion always.
  ParamCount wrap(const ParamCount& inner) const;

  SubDimRouter router{nullptr};
  Monarch monarch{nullptr};  // null without group fusion

 private:
  // B1 w, cached for inference while neither w nor B1 changes (the fold is a [d, d/groups, k] product).
  torch::Tensor folded(const torch::Tensor& w);
  DerivedWeights folds_;
  DerivedWeights packed_;  // inference: the output-side matrix (folded or not) packed block by block
  DerivedWeights mix_;     // inference: Monarch's second factor as the column mix reads it
  int dim_, block_;
  MohdOptions o_;
};
TORCH_MODULE(MohdMixer);

// Per-dimension weights from per-sub-dimension ones: [..., N] -> [..., N * block].
torch::Tensor expand_to_dims(const torch::Tensor& per_sub_dim, int block);

}  // namespace moxlab
