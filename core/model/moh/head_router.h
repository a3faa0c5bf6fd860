// MoH head routing for one attention layer (Eq. 5-6, 9-10; options in moh_options.h).
#pragma once
#include <torch/torch.h>

#include "core/model/moh/moh_options.h"
#include "core/model/straight_through.h"

namespace moxlab {

struct HeadRouting {
  torch::Tensor gates;         // [..., h] g_i used to weight head outputs (binary with STE when quantised)
  torch::Tensor routed_probs;  // [..., h - h_s] Softmax over the routed heads' scores (P of Eq. 7)
  torch::Tensor selected;      // [..., h] float 1/0: heads the token uses (shared heads always 1)
};

class HeadRouterImpl : public torch::nn::Module {
 public:
  // active: this layer's head budget (shared included).
  HeadRouterImpl(int dim, int n_heads, int active, const MohOptions& o);
  // x: [..., dim] the attention input; q: [..., h, head_dim] the queries before RoPE (query_norm router).
  HeadRouting forward(const torch::Tensor& x, const torch::Tensor& q);

  torch::nn::Linear w_shared{nullptr}, w_routed{nullptr}, w_stage{nullptr};  // W_s, W_r, W_h (learned router)
  int n_heads() const { return n_; }
  int routed_heads() const { return n_ - shared_; }
  int top_k() const { return active_ - shared_; }
  const MohOptions& options() const { return o_; }

 private:
  int n_, shared_, active_;
  MohOptions o_;
};
TORCH_MODULE(HeadRouter);

// 0/1 mask [..., N] of the k largest scores along the last dimension, ties to the lower index (a stable
// descending sort; the engine's one-pass router picks the same).
torch::Tensor top_k_selection(const torch::Tensor& scores, int k);

// Eq. 7: L_b = sum over routed heads of f_i P_i, f_i = fraction of tokens selecting head i (top-K),
// P_i = mean Softmax(W_r x)_i. routed_probs: [..., h - h_s]; routed_selected: [..., h - h_s] 0/1.
// gate_form "code" multiplies by the number of routed heads. Not yet weighted by beta.
torch::Tensor head_balance_loss(const torch::Tensor& routed_probs, const torch::Tensor& routed_selected,
                                const std::string& gate_form);

}  // namespace moxlab
