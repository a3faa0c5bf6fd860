// Grouped fusion with a Monarch matrix (MoHD Eq. 9; Dao et al. 2022): M = P^T B2 P B1, where B1 is
// block-diagonal with `groups` blocks of r x r (r = d / groups), P the stride permutation that reads a
// [groups, r] grid column-wise, and B2 block-diagonal with r blocks of groups x groups. Every output
// mixes every input through two small factors: 2 d (r + groups) / 2 parameters instead of d^2.
#pragma once
#include <torch/torch.h>

namespace moxlab {

class MonarchImpl : public torch::nn::Module {
 public:
  MonarchImpl(int dim, int groups);
  torch::Tensor forward(const torch::Tensor& x);  // [..., dim] -> [..., dim]
  // The same map as one dense [dim, dim] matrix (y = x M^T), for tests and inspection.
  torch::Tensor dense() ;
  torch::Tensor b1, b2;  // [groups, r, r] and [r, groups, groups]; y_block = x_block W^T per block

 private:
  int dim_, groups_, r_;
};
TORCH_MODULE(Monarch);

}  // namespace moxlab
