// RMSNorm, SwiGLU and RoPE for training on the fused kernels (kernels/fused/rms_norm.h, swiglu.h, rope.h),
// as autograd functions: RMSNorm's forward is one pass per row keeping the row's 1 / RMS and its backward
// two (a dot product, then dx and the row's share of dw); SwiGLU's forward and backward are one pass each;
// RoPE's backward is the rotation by the opposite angles, one pass like its forward. LibTorch's forms are
// chains of element-wise ops each reading and writing the activations (RMSNorm: square, mean, add, rsqrt
// and two products forward, about twice as many backward; SwiGLU: SiLU and a product forward, two products
// and SiLU's backward; RoPE: two selects, four products, a sum, a difference and a stack, each with its
// backward). Same math as the model's rms_norm (core/model/rmsnorm.h, Zhang & Sennrich 2019 Eq. 4),
// SiLU(gate) * up (core/model/ffn.cpp, Shazeer 2020) and Rope::apply (core/model/rope.h, Su et al. 2021
// Eq. 34), to rounding: values and gradients against LibTorch and finite differences in
// tests/engine/test_training_elementwise.cpp.
#pragma once
#include <torch/torch.h>

namespace moxlab::engine {

// Each returns an undefined tensor for operands it does not take (the OpForms contract, core/model/op_forms.h).
// x [..., d] float32 CPU, weight [d] float32 -> RMSNorm(x) * weight.
torch::Tensor rms_norm_training(const torch::Tensor& x, const torch::Tensor& weight, double eps);
// gate and up float32 CPU of one shape (any strides: copied contiguous unless rows of one stride) -> SiLU(gate) * up.
torch::Tensor swiglu_training(const torch::Tensor& gate, const torch::Tensor& up);
// x [B, T, heads, d] float32 CPU (last dimension contiguous), rotated at positions start .. start + T - 1 by
// cos / sin [positions, d / 2] -> a contiguous [B, T, heads, d].
torch::Tensor rope_training(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, std::int64_t start);

}  // namespace moxlab::engine
