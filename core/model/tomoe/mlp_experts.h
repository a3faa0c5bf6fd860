// ToMoE's MLP experts (section 3.2, Eq. 2-3; App. B.1 Eq. 11; App. B.3): a frozen SwiGLU becomes N
// experts, each keeping a subset of its d_mid channels. A token's expert is a straight-through
// Gumbel-Softmax choice of a bias-free router (Eq. 3, 14); an expert's channels are a straight-through
// Gumbel-Sigmoid of a projection of its embedding (Eq. 11, 15), computed per expert (N x d_mid), not per
// token, and picked by the token's one-hot route (the efficient form of App. B.2).
#pragma once
#include <torch/torch.h>

#include "core/model/ffn.h"

namespace moxlab {

struct MlpExpertOptions {
  int dim = 0;         // model dim d (router input)
  int d_mid = 0;       // SwiGLU hidden size
  int experts = 8;     // N
  int embedding = 128; // d_e of the hypernetwork's expert embeddings
  double tau = 0.4;    // Eq. 14-15 temperature
  double offset = 3.0; // Eq. 15 offset b: every channel starts kept
  bool token_noise = true;  // training noise per token (tomoe.mask_noise = token), else per expert
  bool noise = true;        // tomoe.mask_noise = none: no training noise (deterministic straight-through gates)
  bool equal_widths = true; // tomoe.expert_widths = widest: freezing grows every expert to the widest one's width
};

struct MlpExpertGates {
  torch::Tensor route;         // [..., N] one-hot G (straight-through)
  torch::Tensor probs;         // [..., N] Softmax(router logits): P of the load-balance loss (Eq. 9)
  torch::Tensor expert_masks;  // [N, d_mid] 0/1 s_e (straight-through)
  torch::Tensor token_masks;   // [..., d_mid] G s_e: the channels each token keeps
};

class MlpExpertRouterImpl : public torch::nn::Module {
 public:
  explicit MlpExpertRouterImpl(const MlpExpertOptions& o);
  // x: [..., dim] the FFN input (after the post-attention norm); experts: [N, d_e] this layer's E_l.
  // In training mode the gates draw Gumbel noise from torch's default generator; in eval mode they are
  // deterministic (argmax route, mask = 1 where the projection + b >= 0). Once frozen, the expert masks
  // are the frozen constants in either mode.
  MlpExpertGates forward(const torch::Tensor& x, const torch::Tensor& experts);
  // The conversion (section 3.5): fixes s_e [N, d_mid] to one draw of the gates from these embeddings —
  // with the training noise when noisy (the official code), else the noise-free masks — and, with
  // equal_widths, grows every expert to the widest one's width (App. B). Saved with checkpoints (buffers),
  // after which Proj_D^MLP is no longer needed. Returns the draw before any growing: the experts as
  // trained (Fig. 8's widths).
  torch::Tensor freeze_masks(const torch::Tensor& experts, bool noisy);
  bool frozen() const;

  torch::nn::Linear router{nullptr};     // Linear(d, N), no bias
  torch::nn::LayerNorm proj_norm{nullptr};
  torch::nn::Linear proj{nullptr};       // Proj_D^MLP: LayerNorm -> GELU -> Linear(d_e, d_mid)

 private:
  torch::Tensor mask_logits(const torch::Tensor& experts);
  MlpExpertOptions o_;
  torch::Tensor frozen_masks_;  // [N, d_mid] 0/1 after freeze_masks()
  torch::Tensor frozen_;        // bool scalar buffer
};
TORCH_MODULE(MlpExpertRouter);

// App. B's equal widths: each row of `masks` [N, d_mid] (0/1, the channels score >= 0 kept) becomes the
// top-W of its row of `scores` (the Gumbel-Sigmoid argument x + g + b), W = the widest row's count. A row
// keeps every channel it had (they score highest) and adds its next best; ties go to the lower index.
torch::Tensor equalise_expert_widths(const torch::Tensor& scores, const torch::Tensor& masks);

// Eq. 2: f(X) = (SiLU(X W_G) ⊙ s ⊙ (X W_U) ⊙ s) W_D with the token's channel mask s on both the activated
// gate and the up projection, as the official code does (the same forward value as masking once with a
// 0/1 mask; the straight-through gradient sees both). mask: [..., d_mid], broadcast against x's tokens.
torch::Tensor masked_swiglu(const SwiGLU& ffn, const torch::Tensor& x, const torch::Tensor& mask);

// App. B.3: one expert as a real, smaller SwiGLU holding only its kept channels.
struct ExpertWeights {
  torch::Tensor w_gate;  // [k, dim] rows of W_G (w1)
  torch::Tensor w_up;    // [k, dim] rows of W_U (w3)
  torch::Tensor w_down;  // [dim, k] columns of W_D (w2)
};
ExpertWeights extract_expert(const SwiGLU& ffn, const torch::Tensor& keep);  // keep: [d_mid] 0/1
torch::Tensor expert_forward(const ExpertWeights& e, const torch::Tensor& x);

}  // namespace moxlab
