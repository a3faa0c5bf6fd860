// ToMoE's head-dimension pruning in attention (section 3.3, Eq. 4-5; App. A.1-A.2). Two masks over the
// head dimension, the same for every head:
//   - static s_0 for queries and keys, from the mean expert embedding alone; decided per RoPE rotation pair
//     (head_dim / 2 values) and repeated onto both members of the pair, so masking commutes with RoPE
//     (App. A.2; the paper writes [s_0, s_0] for the rotate-half layout, moxlab's RoPE is interleaved, so
//     each value covers dims 2i and 2i+1);
//   - dynamic s_t for values and outputs, per token: ST-GS(Proj_D(Proj_E(x_t) + mean_i E_i)) (Eq. 5).
// One decoder Proj_D (LayerNorm -> GELU -> Linear(d_e, head_dim + head_dim / 2)) produces both, as in the
// official code. After training, s_t becomes top-K of the decoder's logits with K = the average kept count.
#pragma once
#include <optional>

#include <torch/torch.h>

namespace moxlab {

struct HeadDimMaskOptions {
  int dim = 0;          // model dim d
  int head_dim = 0;     // d / H, even (RoPE pairs)
  int embedding = 128;  // d_e
  double tau = 0.4;
  double offset = 3.0;
  bool token_noise = true;  // the static q/k mask's training noise per token (tomoe.mask_noise), else per pass
  bool noise = true;        // tomoe.mask_noise = none: no training noise (deterministic straight-through gates)
  int min_qk_pairs = 1;     // pairs kept at least when the q/k mask freezes (tomoe.min_qk_pairs)
};

struct HeadDimMasks {
  torch::Tensor qk;  // [head_dim] static 0/1 (straight-through), RoPE-paired; [..., head_dim] while training
                     // with per-token noise (the same logits, each token's own draw)
  torch::Tensor vo;  // [..., head_dim] per token 0/1 (straight-through; plain top-K at inference)
};

class HeadDimMaskerImpl : public torch::nn::Module {
 public:
  explicit HeadDimMaskerImpl(const HeadDimMaskOptions& o);
  // x: [..., dim] the attention input; experts: [N, d_e] this layer's expert embeddings. Training draws
  // Gumbel noise (torch's default generator); evaluation is deterministic (0 noise, or top-K once set).
  HeadDimMasks forward(const torch::Tensor& x, const torch::Tensor& experts);
  // Inference form of s_t (after training): the K largest decoder logits per token.
  void set_inference_top_k(int k);
  std::optional<int> inference_top_k() const;
  // The conversion (section 3.5): fixes the static q/k mask to one draw from these embeddings — with the
  // training noise when noisy (the official code), else noise-free, keeping at least min_qk_pairs pairs
  // (the highest-scoring ones, as the official code keeps one). A buffer, saved with checkpoints.
  void freeze_qk(const torch::Tensor& experts, bool noisy);

  torch::nn::Linear proj_e{nullptr};  // Proj_E^MHA: Linear(d, d_e)
  torch::nn::LayerNorm dec_norm{nullptr};
  torch::nn::Linear dec{nullptr};     // Proj_D^MHA's Linear(d_e, head_dim + head_dim / 2)

 private:
  torch::Tensor decode(const torch::Tensor& e);
  torch::Tensor qk_pair_gates(const torch::Tensor& experts, bool noisy);
  HeadDimMaskOptions o_;
  torch::Tensor top_k_;      // int64 scalar buffer, saved with checkpoints: K after conversion, 0 before
  torch::Tensor frozen_qk_;  // [head_dim / 2] 0/1 per RoPE pair after freeze_qk()
  torch::Tensor qk_frozen_;  // bool scalar buffer
};
TORCH_MODULE(HeadDimMasker);

// Expands one value per RoPE pair to the interleaved head dimension: [.., h/2] -> [.., h] (dims 2i, 2i+1).
torch::Tensor rope_pair_mask(const torch::Tensor& per_pair);

// K = round(mean over tokens of the kept count) of per-token masks [..., width] (section 3.3).
int average_kept(const torch::Tensor& masks);

// 0/1 mask of the k largest values along the last dimension (ties broken by index, as topk does).
torch::Tensor top_k_mask(const torch::Tensor& logits, int k);

}  // namespace moxlab
