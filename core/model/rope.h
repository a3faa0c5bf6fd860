// Rotary position embedding (RoFormer; LLaMA/llama2.c convention): consecutive pairs (x_{2i}, x_{2i+1})
// of each head are rotated by angle pos * theta^(-2i/head_dim). HF-format checkpoints use the
// "rotate half" layout instead; core/io permutes Q/K weights on import/export so the model stays one.
#pragma once
#include <torch/torch.h>

namespace moxlab {

class Rope {
 public:
  Rope() = default;
  Rope(int head_dim, int max_seq_len, double theta);
  // x: [B, T, H, head_dim] at positions start..start+T-1; returns the rotated tensor.
  torch::Tensor apply(const torch::Tensor& x, int64_t start = 0) const;
  // x: [n, head_dim], row i at position positions[i] (int64): the gathered tokens of a sparse kernel.
  torch::Tensor apply_at(const torch::Tensor& x, const torch::Tensor& positions) const;
  // x: [n, H, head_dim], row i at position positions[i]: tokens held in another order (MoHD's sparse rows).
  torch::Tensor apply_rows(const torch::Tensor& x, const torch::Tensor& positions) const;
  const torch::Tensor& cos() const { return cos_; }
  const torch::Tensor& sin() const { return sin_; }
  // The rotation of only some pairs (ToMoE's pruned q/k keep whole pairs, each with its own frequency):
  // apply() of the result rotates [.., 2 * pairs.size(0)] vectors laid out as the kept pairs in order.
  Rope select_pairs(const torch::Tensor& pairs) const;

 private:
  torch::Tensor cos_, sin_;  // [max_seq_len, head_dim/2], float32
};

}  // namespace moxlab
