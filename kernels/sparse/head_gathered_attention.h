// Attention that computes, for every head, only the tokens that use it: the gathered form of MoH's
// weighted head sum (Eq. 4), MoH(X) = sum_i g_i H^i W_O^i with g_i = 0 for unselected heads.
// Per head: the query projection of its tokens only, their scores against the (shared) keys, and the
// gate-weighted output projection W_O^i accumulated into the output rows of those tokens, so a token
// using K of h heads costs K/h of the dense query, score, value-mix and output FLOPs. Keys and values
// are computed for every token (any later token's selected head may read them). Differentiable.
#pragma once
#include <functional>

#include <torch/torch.h>

namespace moxlab {

struct HeadGatheredAttention {
  torch::Tensor x;      // [B, T, d] the attention input
  torch::Tensor k, v;   // [B, T, Hkv, hd], k already rotated
  torch::Tensor wq, bq; // [H * hd, d] and an optional bias [H * hd]
  torch::Tensor q;      // optional [B, T, H, hd] queries before rotation, when the router already needed them all
  torch::Tensor wo;     // [d, H * hd]
  torch::Tensor gates;  // [B, T, H]: a head contributes where its gate is non-zero
  // Rotates queries q [n, hd] at positions pos [n] (int64): RoPE of the model.
  std::function<torch::Tensor(const torch::Tensor& q, const torch::Tensor& pos)> rotate;
  bool causal = true;
  double scale = 0;     // 0: 1 / sqrt(hd)
};

// Returns the attention output after W_O, [B, T, d].
torch::Tensor head_gathered_attention(const HeadGatheredAttention& a);

}  // namespace moxlab
