// The attention core of a training pass on the training attention kernels (kernels/fused/attention_training.h)
// as an autograd function: the forward keeps the softmax's probabilities, the backward computes dQ, dK and
// dV from them. Equal to dot_product_attention_torch to rounding, forward and gradients
// (tests/engine/test_training_attention.cpp, finite differences included).
#pragma once
#include <torch/torch.h>

namespace moxlab::engine {

// q [B, H, T, hq], k [B, Hkv, T, hq], v [B, Hkv, T, hd] (the OpForms::attention signature). Undefined where
// the kernels do not take the operands (not float32 CPU; keys of another length than the queries).
torch::Tensor training_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal, double scale);

}  // namespace moxlab::engine
