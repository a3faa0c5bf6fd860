// Scaled dot-product attention for inference in one pass per query row: softmax(q k^T * scale) v with
// grouped-query heads and an optional causal mask, as register-tiled multiply-adds over a packed K^T and
// V rows read in place, with the softmax's exponential vectorised in between. The torch form
// (core/model/attention.cpp) runs two batched GEMMs with a small inner dimension (the head width) and a
// softmax pass per 64-query tile; this one keeps a block of four (eight with 16-float vectors) query rows'
// scores in L1 and never materialises more.
//
// q [B, H, T, hq], k [B, Hkv, Tk, hq], v [B, Hkv, Tk, hd]: float32 CPU, each with its last dimension
// contiguous (any other strides: the callers pass transposed [B, T, heads, d] views); query head h reads
// key/value head h / (H / Hkv). Causal: query t is at key position Tk - T + t and sees keys up to it.
// Returns [B, H, T, hd] as a view of a contiguous [B, T, H, hd] (what the output projection reads).
// No autograd; attention_fusable() says when it applies (hd a multiple of 8).
#pragma once
#include <torch/torch.h>

namespace moxlab {

// With gates [B, T, H] (contiguous float32; attention_gates_fit), the output of head h at position t is
// multiplied by gates[b, t, h], and a head whose gate is 0 there is skipped (its output zero): MoH's
// weighted heads (Eq. 4) with only the selected heads' scores and value mixes computed. With dim_scales
// [B, T, hd] (attention_dim_scales_fit), output dim j of every head at position t is multiplied by
// dim_scales[b, t, j] as it is stored: ToMoE's per-token v/o mask, the same in every head.
bool attention_fusable(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
bool attention_gates_fit(const torch::Tensor& q, const torch::Tensor& gates);
bool attention_dim_scales_fit(const torch::Tensor& q, const torch::Tensor& v, const torch::Tensor& dim_scales);
torch::Tensor attention_inference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                  double scale, const torch::Tensor& gates = {}, const torch::Tensor& dim_scales = {});

// The same on tokens held as rows in another order (MoHD's sparse form keeps its activations sorted by
// routed block): q [M, H, hq], k [M, Hkv, hq], v [M, Hkv, hd] with M = batch x T, token (b, t) in row
// row_of_token[b * T + t] (int64), every row's heads contiguous. Returns [M, H * hd] in the same row order,
// ready for a block-sparse output projection. No cached keys: the queries are their own keys.
bool attention_rows_fusable(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
torch::Tensor attention_inference_rows(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                       const torch::Tensor& row_of_token, std::int64_t batch, bool causal, double scale);

// e^x for one value through the kernel's vectorised exponential (range reduction to 2^n e^r, |r| <= ln2/2,
// and a degree-6 polynomial); exposed for its accuracy test.
float attention_exp(float x);

}  // namespace moxlab
