// The language-modelling loss for training on the fused cross-entropy kernel (kernels/fused/
// cross_entropy.h): Transformer::lm_loss (mean next-token cross-entropy, targets of -1 ignored) as an
// autograd function whose forward keeps the probabilities and whose backward turns them into the logits'
// gradient in place. Equal to LibTorch's cross_entropy to rounding, value and gradient
// (tests/engine/test_training_loss.cpp, finite differences included).
#pragma once
#include <torch/torch.h>

namespace moxlab::engine {

// Whether the kernel takes these logits: float32 on the CPU.
bool training_loss_applies(const torch::Tensor& logits);

// logits [..., V], targets [...] (int64, -1 = ignored) -> the mean loss over the targets kept (a scalar).
// Its backward runs once (the probabilities it keeps become the gradient).
torch::Tensor lm_loss_fused(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace moxlab::engine
