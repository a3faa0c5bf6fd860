// ToMoE's regularisers (section 3.4, Eq. 6-9 and App. B.2 Eq. 16) as functions of masks and router
// outputs, so each is checked against a hand computation. Not yet weighted (Eq. 10: alpha, beta, gamma).
#pragma once
#include <vector>

#include <torch/torch.h>

namespace moxlab {

// f(x, y) = log(max(x, y) / min(x, y)) (below Eq. 8): a symmetric log-ratio distance, zero at x = y.
// x: a scalar tensor > 0 (differentiable), y > 0.
torch::Tensor log_ratio_distance(const torch::Tensor& x, double y);

// Eq. 6 / Eq. 16: the union of kept positions, u = 1 - prod_i (1 - s_i) over dimension -2 of masks
// [..., n, width] (n tokens for Eq. 6; n experts for the efficient MLP form Eq. 16). Differentiable in the
// soft (straight-through) masks.
torch::Tensor union_of_masks(const torch::Tensor& masks);

// Eq. 7: R_U = (1/L) sum_l f(sum(u_l) / |u_l|, 1) over the per-layer unions u_l (each [width_l]).
torch::Tensor union_regulariser(const std::vector<torch::Tensor>& unions);

// Eq. 8's layer width d_l: the largest kept count over the rows of masks [rows, width] (experts for the
// MLP, tokens for the v/o head dimension): the upper bound on what any token activates. Differentiable
// (the gradient reaches the widest row).
torch::Tensor max_width(const torch::Tensor& masks);

// The dense model's shape that T(d_MoE) counts over: per layer the attention matrices W_Q, W_K, W_V, W_O
// and the SwiGLU's W_G, W_U, W_D (norms and embeddings excluded).
struct TomoeShape {
  int dim = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0, d_mid = 0;
};
// One layer's kept widths: q/k head dims (static), v/o head dims (max over tokens), MLP channels (max over
// experts). Scalar tensors, so the count stays differentiable.
struct LayerWidths {
  torch::Tensor qk, vo, mlp;
};
// T(d_MoE) (Eq. 8): sum over layers of dim·(H + H_kv)·w_qk + dim·(H_kv + H)·w_vo + 3·dim·w_mlp.
torch::Tensor active_parameters(const TomoeShape& shape, const std::vector<LayerWidths>& layers);
// T_total: the same count with every width full.
double total_parameters(const TomoeShape& shape, int layers);
// Eq. 8: R_P = f(T(d_MoE), p·T_total), p in (0, 1] the target active ratio.
torch::Tensor parameter_regulariser(const torch::Tensor& active, double total, double p);

// Eq. 9 (Switch Transformer load balancing): R_L = N sum_i F_i P_i, F_i = fraction of tokens whose
// one-hot routing G picks expert i (not differentiated), P_i = mean router probability of expert i.
// one_hot, probs: [..., N]; leading dimensions are tokens. Uniform routing gives 1.
torch::Tensor switch_load_balance(const torch::Tensor& one_hot, const torch::Tensor& probs);
// The official code's R_L: sum_i F_i P_i with P_i the mean of the straight-through routes (one-hot forward,
// softmax gradient): its value is sum_i F_i^2, 1/N when balanced; F detached.
torch::Tensor routed_load_balance(const torch::Tensor& route);

}  // namespace moxlab
