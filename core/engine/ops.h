// The engine's elementwise and attention ops: the fused one-pass kernel (kernels/fused, kernels/sparse)
// where its predicate holds (no autograd, float32, CPU, shapes it supports), otherwise the model's torch
// reference of the same formula. Each equals its reference to rounding (tests/kernels, tests/engine).
#pragma once
#include <utility>

#include <torch/torch.h>

#include "core/model/mohd/monarch.h"
#include "core/model/rope.h"

namespace moxlab::engine {

// RMSNorm (core/model/rmsnorm.h) in one pass per row.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);
// A residual add and the norm after it: (x + a, rms_norm(x + a)) in one pass per row.
std::pair<torch::Tensor, torch::Tensor> add_rms_norm(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& weight, double eps);
// Rope::apply (x [B, T, H, hd] at positions start..) and Rope::apply_rows (x [n, H, hd], row i at positions[i]).
torch::Tensor rope_apply(const Rope& rope, const torch::Tensor& x, std::int64_t start = 0);
torch::Tensor rope_apply_rows(const Rope& rope, const torch::Tensor& x, const torch::Tensor& positions);
// dot_product_attention (core/model/attention.h): the one-pass kernel skips the (position, head) pairs
// whose gate is 0.
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal, double scale = 0,
                        const torch::Tensor& gates = {}, const torch::Tensor& dim_scales = {});
// SiLU(gate) ⊙ up, written over `gate` (it is consumed).
torch::Tensor swiglu_activation(torch::Tensor gate, const torch::Tensor& up);
// Monarch's second factor P^T B2 P (core/model/mohd/monarch.h) in one pass without grid copies (with
// autograd: core/engine/monarch_mix_training.h), and the whole fusion M x = second_factor(B1 x).
torch::Tensor monarch_second_factor(MonarchImpl& m, const torch::Tensor& x);
torch::Tensor monarch(MonarchImpl& m, const torch::Tensor& x);

}  // namespace moxlab::engine
