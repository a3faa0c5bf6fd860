// ToMoE's straight-through Gumbel gates (ToMoE paper, App. A.3). The forward pass uses the hard sample
// (a one-hot expert choice, a 0/1 channel mask), the backward pass the gradient of the soft relaxation
// at the same noise, so routers and mask projections train through discrete decisions. The noise is an
// argument: training draws it with gumbel_noise(), evaluation passes zeros (the deterministic decision).
#pragma once
#include <torch/torch.h>

namespace moxlab {

// Gumbel(0, 1) samples g = -log(-log u), u ~ U(0, 1) drawn from `gen` (u kept inside (0, 1) so g is finite).
torch::Tensor gumbel_noise(at::IntArrayRef shape, at::Generator gen, const torch::TensorOptions& options = {});

// The noise of a gate over `like`: Gumbel samples from torch's default generator while training (seeded
// by the trainer), zeros in evaluation (the deterministic decision).
torch::Tensor gate_noise(const torch::Tensor& like, bool training);

// Eq. 14: ST-G(x) = one_hot(argmax_i (x_i + g_i) / tau) over the last dimension; the gradient is that of
// softmax((x + g) / tau). logits and noise have the same shape; tau > 0 (ToMoE: 0.4).
torch::Tensor st_gumbel_softmax(const torch::Tensor& logits, const torch::Tensor& noise, double tau);

// Eq. 15: ST-GS(x) = round(sigmoid((x + g + b) / tau)), i.e. 1 where x + g + b >= 0 (a sigmoid of exactly
// 0.5 rounds up); the gradient is that of sigmoid((x + g + b) / tau). The offset b (ToMoE: 3.0) makes every
// channel start kept.
torch::Tensor st_gumbel_sigmoid(const torch::Tensor& logits, const torch::Tensor& noise, double tau, double offset);

}  // namespace moxlab
