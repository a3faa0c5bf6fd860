// The MoHD router of one component (Eq. 11-12): scores s = Softmax(x phi) over the N sub-dimension
// centroids phi (one row of d per sub-dimension), gates g_i = s_i for the `shared` first sub-dimensions
// and for the top (active - shared) of the others by score, g_i = 0 otherwise.
#pragma once
#include <torch/torch.h>

#include "core/model/mohd/mohd_options.h"
#include "kernels/sparse/sub_dim_topk.h"

namespace moxlab {

struct SubDimRouting {
  torch::Tensor probs;  // [..., N] s, softmax over all N (Eq. 11)
  torch::Tensor gates;  // [..., N] g: s on active sub-dimensions, 0 elsewhere (Eq. 12)
  torch::Tensor active; // [..., N] bool: which sub-dimensions the token uses
  torch::Tensor weights;  // [..., N] each output block's weight g * alpha (Sec. 4.2, GateScaling; g without scaling)
};

class SubDimRouterImpl : public torch::nn::Module {
 public:
  SubDimRouterImpl(int dim, const MohdOptions& o);
  SubDimRouting forward(const torch::Tensor& x);  // x: [..., dim]
  // The routing given the centroid scores x phi^T [..., N] (forward after the product).
  SubDimRouting route_logits(const torch::Tensor& logits) const;
  torch::nn::Linear centroids{nullptr};          // phi: [N, dim], no bias
  int sub_dims() const { return n_; }
  int shared() const { return shared_; }
  int routed() const { return active_ - shared_; }  // top-k of the specialised sub-dimensions
  GateScaling scaling() const { return scaling_; }

 private:
  int n_, active_, shared_;
  GateScaling scaling_;
};
TORCH_MODULE(SubDimRouter);

}  // namespace moxlab
