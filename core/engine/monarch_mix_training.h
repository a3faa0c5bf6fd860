// Monarch's second factor (MoHD Eq. 9: y = P^T B2 P x) with autograd on the column-mix kernel
// (kernels/sparse/monarch_mix.h): the forward mixes each grid column by its own groups x groups block,
// dx mixes dy by the transposed blocks, db2 sums dy x outer products over the rows. LibTorch's form
// (MonarchImpl::second_factor: an einsum, i.e. a batched matmul of r tiny products between two transposed
// copies) cost more than MoHD's block-sparse products in a training step. Equal to it to rounding,
// forward and gradients (tests/engine/test_monarch_mix_training.cpp, finite differences included).
#pragma once
#include <torch/torch.h>

namespace moxlab::engine {

// Whether the kernel takes x and b2: float32 CPU tensors.
bool monarch_mix_training_applies(const torch::Tensor& x, const torch::Tensor& b2);

// x [..., groups * r], b2 [r, groups, groups] -> [..., groups * r].
torch::Tensor monarch_mix_training(const torch::Tensor& x, const torch::Tensor& b2);

}  // namespace moxlab::engine
