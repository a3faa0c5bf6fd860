// MoHD's router after its centroid scores, for inference, in one pass over the [M, N] logits (instead of
// softmax, top-k, scatter, masks and the scaling as a dozen small tensor ops per component):
//   probs   s = Softmax(x phi)                          (Eq. 11)
//   active  the first `shared` and the top `routed` of the others by s (ties: the lower index)  (Eq. 12)
//   gates   g = s on active sub-dimensions, 0 elsewhere  (Eq. 12)
//   weights g * alpha (Sec. 4.2's activation scaling, GateScaling), or g without scaling
// CPU float32, no autograd (SubDimRouter keeps the differentiable form for training).
#pragma once
#include <torch/torch.h>

#include "kernels/fused/packed_matmul.h"

namespace moxlab {

// Sec. 4.2's alpha: none (1), N * sum(g) as the paper writes it, or K / sum(g) with K = shared + routed
// active sub-dimensions (the active weights then average 1).
enum class GateScaling { none, n_sum, k_over_sum };

// alpha of one token from the sum of its active gates.
inline double gate_alpha(GateScaling s, double gate_sum, std::int64_t n, int active) {
  constexpr double kTiny = 1e-30;  // all-shared routing with vanishing scores: no division by zero
  if (s == GateScaling::n_sum) return static_cast<double>(n) * gate_sum;
  if (s == GateScaling::k_over_sum) return active / (gate_sum > kTiny ? gate_sum : kTiny);
  return 1.0;
}

struct SubDimTopK {
  torch::Tensor probs, active, gates, weights;  // [M, N]; active is bool
};

SubDimTopK sub_dim_top_k(const torch::Tensor& logits, int shared, int routed, GateScaling scaling);

// The same from the router's input x [.., d] and its centroids phi [N, d], packed (pack_weight; the router
// keeps the packing across calls: per call it was a tenth of a MoHD decode step's torch ops): the logits
// x phi^T as a packed product (kernels/fused/packed_matmul.h) over each thread's rows, then their routing,
// in one parallel pass. Returns [M, N] tensors, M = x.numel() / d. Contiguous float32 CPU x, no autograd.
bool sub_dim_route_fusable(const torch::Tensor& x, const torch::Tensor& centroids);
SubDimTopK sub_dim_route(const torch::Tensor& x, const PackedWeight& centroids, int shared, int routed, GateScaling scaling);

}  // namespace moxlab
