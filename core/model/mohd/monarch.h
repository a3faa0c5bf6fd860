// Grouped fusion with a Monarch matrix (MoHD Eq. 9; Dao et al. 2022): M = P^T B2 P B1, where B1 is
// block-diagonal with `groups` blocks of r x r (r = d / groups), P the stride permutation that reads a
// [groups, r] grid column-wise, and B2 block-diagonal with r blocks of groups x groups. Every output
// mixes every input through two small factors: 2 d (r + groups) / 2 parameters instead of d^2.
#pragma once
#include <torch/torch.h>

#include "core/model/post_init.h"

namespace moxlab {

// identity: after the model's draws both factors become identity blocks, so M = I (mohd.*.fusion_init).
class MonarchImpl : public torch::nn::Module, public PostInit {
 public:
  MonarchImpl(int dim, int groups, bool identity = false);
  void post_init() override;
  torch::Tensor forward(const torch::Tensor& x);  // [..., dim] -> [..., dim]; = second_factor(first_factor(x))
  torch::Tensor first_factor(const torch::Tensor& x);   // B1
  torch::Tensor second_factor(const torch::Tensor& x);  // P^T B2 P
  // Fused form for a matrix w [dim, k] whose output feeds the fusion: B1 w, so that
  // forward(w h) = second_factor((B1 w) h) and B1 costs nothing per token. Because B1 is block-diagonal,
  // output rows of B1 w in a block depend only on w's rows of that block: a token's inactive (zero) output
  // blocks stay zero, which is what lets MoHD's gathered output projection absorb B1 (see
  // core/engine/mohd_sparse.h). Sub-dimension blocks must hold whole B1 blocks: can_fold(blocks).
  torch::Tensor fold_first_factor(const torch::Tensor& w);
  bool can_fold(int blocks) const { return blocks > 0 && groups_ % blocks == 0; }
  // The same map as one dense [dim, dim] matrix (y = x M^T), for tests and inspection.
  torch::Tensor dense() ;
  torch::Tensor b1, b2;  // [groups, r, r] and [r, groups, groups]; y_block = x_block W^T per block

 private:
  int dim_, groups_, r_;
  bool identity_;
};
TORCH_MODULE(Monarch);

}  // namespace moxlab
