#include "core/model/moh/moh_attention.h"

#include "core/model/kind_modules.h"
#include "kernels/fused/packed_matmul.h"
#include "kernels/sparse/head_gathered_attention.h"

namespace moxlab {

MohAttention::MohAttention(const ModelOptions& o, int layer)
    : DenseAttention(o), o_(o.moh), active_(o.moh.active_heads(layer)), loss_weight_(o.moh.balance_beta / o.n_layers) {
  head_router = register_module("head_router", HeadRouter(o.dim, o.n_heads, active_, o.moh));
}

torch::Tensor MohAttention::forward(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx, const BlockTapNames& taps) {
  // Three forms of Eq. 4.
  // - Fused (inference without autograd on float32 CPU; Kernels automatic or sparse): only each token's
  //   selected heads, packed products and the fused attention kernel (moh_attention_fused.cpp).
  // - Head-gathered (Kernels::sparse with autograd): each head's queries, scores and output projection
  //   only for its tokens, in torch ops; no KV cache. Slower than the reference in training, so never
  //   automatic (docs/decisions/2026-11-25-sparse-forms-and-model-kernels.md).
  // - Reference: every head computed, multiplied by its gate.
  if (ctx.sparse_kernels(true, false) && packed_applies(x)) return forward_fused(x, rope, ctx, taps);
  const bool gathered = ctx.kv_cache == nullptr && ctx.sparse_kernels(false, false);
  const auto B = x.size(0), T = x.size(1);
  torch::Tensor q, heads;
  if (!gathered) heads = head_outputs(x, rope, ctx, taps, &q);  // [B, T, h, hd]
  else if (o_.router == "query_norm") q = wq(x).view({B, T, n_heads_, head_dim_});  // the router reads every query
  const HeadRouting r = head_router->forward(x, q);
  report(r, ctx, taps);
  if (!gathered) return project(heads * r.gates.unsqueeze(-1), ctx, taps);  // Eq. 4
  // Head-gathered: each head's queries, scores and output projection only for the tokens that selected it.
  HeadGatheredAttention a;
  a.x = x;
  a.k = rope.apply(wk(x).view({B, T, n_kv_heads_, head_dim_}));
  a.v = wv(x).view({B, T, n_kv_heads_, head_dim_});
  a.wq = wq->weight;
  a.bq = wq->bias;
  a.q = q;
  a.wo = wo->weight;
  a.gates = r.gates;
  a.rotate = [&rope](const torch::Tensor& qh, const torch::Tensor& pos) { return rope.apply_at(qh, pos); };
  a.causal = causal_;
  return head_gathered_attention(a);
}

void MohAttention::report(const HeadRouting& r, ForwardContext& ctx, const BlockTapNames& taps) const {
  ctx.tap(taps.attn_router_probs, r.gates);
  ctx.tap(taps.attn_router_topk, r.selected);
  if (loss_weight_ > 0 && ctx.aux_losses_wanted && head_router->routed_heads() > 0 && head_router->top_k() > 0) {
    const std::string name = taps.attn_router_probs.substr(0, taps.attn_router_probs.size() - std::string("router.probs").size());
    ctx.aux_losses.emplace_back(name + "balance",
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
