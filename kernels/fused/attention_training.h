// Scaled dot-product attention for training: the forward keeps the softmax's probabilities, the backward
// computes dQ, dK and dV from them, all products on the packed kernels (kernels/fused/packed_matmul.h)
// against per-head packings of K, V, Q and dO made in the loop (a [T, d] copy per head against T^2 d
// multiply-adds), the softmax and its derivative vectorised in between. The torch form
// (core/model/attention.cpp) runs the same math as batched GEMMs and element-wise passes.
//
// q [B, H, T, hq], k [B, Hkv, T, hq], v [B, Hkv, T, hd]: float32 CPU, last dimension contiguous (any other
// strides: the model passes transposed [B, T, heads, d] views); query head h reads key/value head
// h / (H / Hkv). Causal: query t sees keys 0 .. t (queries and keys the same positions: no cache).
// Work splits across the threads by (batch, key/value head); dK and dV of a group's heads accumulate there.
#pragma once
#include <tuple>

#include <torch/torch.h>

namespace moxlab {

// Whether the kernels take these operands (shapes, dtype, device and strides as above).
bool attention_training_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

struct AttentionForward {
  torch::Tensor out;    // [B, H, T, hd], a view of a contiguous [B, T, H, hd]
  torch::Tensor probs;  // [B, H, T, T] softmax(scale q k^T) (zero where masked)
};
AttentionForward attention_training_forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                            double scale);

// Gradients of attention_training_forward's out for d_out [B, H, T, hd]: dq [B, H, T, hq], dk, dv as
// [B, Hkv, T, d], each a view of a contiguous [B, T, heads, d].
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> attention_training_backward(const torch::Tensor& q, const torch::Tensor& k,
                                                                                    const torch::Tensor& v,
                                                                                    const torch::Tensor& probs,
                                                                                    const torch::Tensor& d_out, bool causal,
                                                                                    double scale);

}  // namespace moxlab
