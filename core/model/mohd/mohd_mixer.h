// The part MoHD adds around a component (attention or FFN): the router, the input restricted to the
// token's active sub-dimensions (x_s, Eq. 8), and on the output the gate-weighted concatenation of the
// active output sub-dimensions, activation scaling alpha = N * sum(active g) (Sec. 4.2) and Monarch
// group fusion back to d (Eq. 9-10):  y = M alpha ||_i g_i Dim_i(x_s).
//
// Slicing a matrix along the hidden dimension and keeping sub-dimension i means: input-side matrices
// (W_Q, W_K, W_V, W_gate, W_up) read only the active input blocks, output-side ones (W_O, W_down) produce
// only the active output blocks. Both equal the dense matrix applied to the masked input, with the
// output masked, so the reference form runs the dense component on x_s and weights its output blocks.
// The engine's sparse forms (core/engine/mohd_sparse.h) read and write only the active blocks and fold
// Monarch's first factor into the output-side matrix; tests hold them equal to this reference. Eq. 14-16
// also write the gates inside
// the up-projections; we apply them once, on the concatenated output, as the general Eq. 8/10 do.
#pragma once
#include <string>

#include <torch/torch.h>

#include "core/model/analysis.h"
#include "core/model/mohd/monarch.h"
#include "core/model/mohd/mohd_options.h"
#include "core/model/mohd/sub_dim_router.h"
#include "core/model/param_count.h"

namespace moxlab {

class MohdMixerImpl : public torch::nn::Module {
 public:
  MohdMixerImpl(int dim, const MohdOptions& o);

  // Routes x [B, T, d]; records the router taps and the balance loss (named `name`) in an.
  SubDimRouting route(const torch::Tensor& x, Analysis& an, const std::string& name, const std::string& probs_tap,
                      const std::string& topk_tap);
  // The taps and the balance loss of a routing computed elsewhere (the engine's fused router).
  void record(const SubDimRouting& r, Analysis& an, const std::string& name, const std::string& probs_tap,
              const std::string& topk_tap) const;
  // x_s: x with the token's inactive sub-dimension blocks zeroed (Eq. 8).
  torch::Tensor mask_input(const torch::Tensor& x, const SubDimRouting& routing) const;
  // y [B, T, d]: the dense component's output on x_s -> M alpha (g-weighted active blocks).
  torch::Tensor combine(const torch::Tensor& y, const SubDimRouting& routing);

  // Parameters of a component wrapped by this mixer: matrices active in active/N, router and fusion always.
  ParamCount wrap(const ParamCount& inner) const;

  const MohdOptions& options() const { return o_; }
  int block() const { return block_; }  // dims per sub-dimension, d / N

  SubDimRouter router{nullptr};
  Monarch monarch{nullptr};  // null without group fusion

 private:
  int dim_, block_;
  MohdOptions o_;
};
TORCH_MODULE(MohdMixer);

// Per-dimension weights from per-sub-dimension ones: [..., N] -> [..., N * block].
torch::Tensor expand_to_dims(const torch::Tensor& per_sub_dim, int block);

}  // namespace moxlab
