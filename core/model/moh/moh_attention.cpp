#include "core/model/moh/moh_attention.h"

#include "core/model/kind_modules.h"

namespace moxlab {

MohAttention::MohAttention(const ModelOptions& o, int layer)
    : DenseAttention(o), o_(o.moh), active_(o.moh.active_heads(layer)), loss_weight_(o.moh.balance_beta / o.n_layers) {
  head_router = register_module("head_router", HeadRouter(o.dim, o.n_heads, active_, o.moh));
}

torch::Tensor MohAttention::forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO&) {
  torch::Tensor q;
  const auto heads = head_outputs(x, rope, an, taps, &q);  // [B, T, h, hd]
  const HeadRouting r = head_router->forward(x, q);
  report(r, an, taps);
  return project(heads * r.gates.unsqueeze(-1), an, taps);  // Eq. 4
}

void MohAttention::report(const HeadRouting& r, Analysis& an, const BlockTapNames& taps) const {
  an.tap(taps.attn_router_probs, r.gates);
  an.tap(taps.attn_router_topk, r.selected);
  if (loss_weight_ > 0 && an.aux_losses_wanted && head_router->routed_heads() > 0 && head_router->top_k() > 0) {
    const std::string name = taps.attn_router_probs.substr(0, taps.attn_router_probs.size() - std::string("router.probs").size());
    an.aux_losses.emplace_back(name + "balance",
                                loss_weight_ * head_balance_loss(r.routed_probs, r.selected.narrow(-1, o_.shared, head_router->routed_heads()),
                                                                 o_.gate_form));
  }
}

ParamCount MohAttention::param_count() const {
  ParamCount c;
  const double share = static_cast<double>(active_) / n_heads_;
  std::int64_t router = 0;
  for (const auto& p : head_router->parameters()) router += p.numel();
  const std::int64_t q_o = wq->weight.numel() + wo->weight.numel() + (wq->bias.defined() ? wq->bias.numel() : 0);
  const std::int64_t k_v = wk->weight.numel() + wv->weight.numel() + (wk->bias.defined() ? wk->bias.numel() + wv->bias.numel() : 0);
  c.total = q_o + k_v + router;
  c.active = static_cast<std::int64_t>(q_o * share + 0.5) + k_v + router;
  return c;
}

KindModules moh_kind_modules() {
  return {[](const ModelOptions& o, int layer) { return std::make_shared<MohAttention>(o, layer); }, nullptr};
}

}  // namespace moxlab
