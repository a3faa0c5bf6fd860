// SwiGLU's activation for inference in one pass (Shazeer 2020): gate <- SiLU(gate) * up, SiLU(g) =
// g * sigmoid(g), in place, instead of a SiLU pass and a product pass over the hidden activations.
// sigmoid(g) is 1 / (1 + e^-|g|) for g >= 0 and e^-|g| / (1 + e^-|g|) below, so e^x is only taken of
// x <= 0 and never overflows. gate and up [rows, hidden] float32 CPU with contiguous rows (any row stride:
// they are the halves of one stacked gate/up product). No autograd.
#pragma once
#include <torch/torch.h>

namespace moxlab {

bool swiglu_fusable(const torch::Tensor& gate, const torch::Tensor& up);
// Returns gate, overwritten.
torch::Tensor swiglu_inference(torch::Tensor gate, const torch::Tensor& up);

// Training's passes (called inside an autograd function; core/engine/training_elementwise.h), on gate and up
// as swiglu_fusable takes them but with autograd on: a = SiLU(gate) * up as a new contiguous tensor, and its
// backward (dgate, dup) from da (contiguous, gate's shape) in one pass.
bool swiglu_training_fits(const torch::Tensor& gate, const torch::Tensor& up);
torch::Tensor swiglu_training_forward(const torch::Tensor& gate, const torch::Tensor& up);
std::pair<torch::Tensor, torch::Tensor> swiglu_backward(const torch::Tensor& da, const torch::Tensor& gate, const torch::Tensor& up);

}  // namespace moxlab
