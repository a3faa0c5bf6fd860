// MoH attention (Eq. 4): the dense grouped-query attention of LLaMA whose per-head outputs are weighted
// by the head router's gates before the output projection, MoH(X) = sum_i g_i H^i W_O^i. It derives
// from DenseAttention so the parameter names (wq, wk, wv, wo) are those of a dense model: a dense
// checkpoint loads as is, which is how section 4.4 continue-tunes a dense model (with the
// parameter-free query_norm router there are no new parameters at all).
//
// This is the reference form: every head is computed and unselected ones are multiplied by 0. The
// engine's forms compute each head only for its tokens (core/engine/moh_plan.h: the fused inference form,
// and the head-gathered training form). The load-balance loss (Eq. 7) times beta / n_layers goes to an.aux_losses
// (Eq. 8, averaged over layers as in the official code). Taps: blocks.<l>.attn.router.probs = the
// gates g [B, T, h], blocks.<l>.attn.router.topk = the selected heads (0/1) [B, T, h].
// With the query_norm router the balance loss's P is the softmax of the normalised query norms, so
// beta pushes gradients into wq; the paper does not say whether its continue-tuning used the loss
// (moh.balance_beta = 0 turns it off).
#pragma once
#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/model/moh/head_router.h"

namespace moxlab {

class MohAttention : public DenseAttention {
 public:
  MohAttention(const ModelOptions& o, int layer);
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO& io) override;
  // Active: wq and wo rows/columns of the active heads, all of wk and wv (grouped-query K/V heads serve
  // any query head of their group), the router.
  ParamCount param_count() const override;

  // The router's taps and its balance loss (Eq. 7-8) into an.
  void report(const HeadRouting& r, Analysis& an, const BlockTapNames& taps) const;
  const MohOptions& options() const { return o_; }

  HeadRouter head_router{nullptr};

 private:
  MohOptions o_;
  int active_;
  double loss_weight_;  // beta / n_layers
};

}  // namespace moxlab
