#include "core/model/attention.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/moh/moh_attention.h"
#include "core/model/mohd/mohd_components.h"
#include "core/model/tomoe/tomoe_modules.h"

namespace moxlab {

ParamCount Attention::param_count() const {
  ParamCount c;
  for (const auto& p : parameters()) c.total += p.numel();
  c.active = c.total;
  return c;
}

DenseAttention::DenseAttention(const ModelOptions& o)
    : n_heads_(o.n_heads), n_kv_heads_(o.n_kv_heads), head_dim_(o.head_dim()), causal_(o.causal) {
  const int q_dim = n_heads_ * head_dim_, kv_dim = n_kv_heads_ * head_dim_;
  wq = register_module("wq", torch::nn::Linear(torch::nn::LinearOptions(o.dim, q_dim).bias(o.qkv_bias)));
  wk = register_module("wk", torch::nn::Linear(torch::nn::LinearOptions(o.dim, kv_dim).bias(o.qkv_bias)));
  wv = register_module("wv", torch::nn::Linear(torch::nn::LinearOptions(o.dim, kv_dim).bias(o.qkv_bias)));
  wo = register_module("wo", torch::nn::Linear(torch::nn::LinearOptions(q_dim, o.dim).bias(false)));
}

torch::Tensor dot_product_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                    double scale) {
  const auto T = q.size(2);
  auto scores = torch::matmul(q, k.transpose(-2, -1));
  scores = scale == 0 ? scores / std::sqrt(static_cast<double>(q.size(-1))) : scores * scale;
  if (!causal) return torch::matmul(torch::softmax(scores, -1), v);
  auto mask = torch::ones({T, T}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).triu(1);
  scores = scores.masked_fill(mask, -std::numeric_limits<float>::infinity());
  return torch::matmul(torch::softmax(scores, -1), v);
}

torch::Tensor DenseAttention::head_outputs(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx,
                                           const BlockTapNames& taps, torch::Tensor* q_pre_rope,
                                           const torch::Tensor& qk_mask) {
  const auto B = x.size(0), T = x.size(1);
  ctx.tap(taps.attn_in, x);
  auto q = wq(x).view({B, T, n_heads_, head_dim_});
  auto k = wk(x).view({B, T, n_kv_heads_, head_dim_});
  auto v = wv(x).view({B, T, n_kv_heads_, head_dim_});
  ctx.tap(taps.attn_q, q);  // before RoPE: the query content (MoH's L2 router reads this)
  ctx.tap(taps.attn_k, k);
  ctx.tap(taps.attn_v, v);
  if (q_pre_rope) *q_pre_rope = q;
  return attend(q, k, v, rope, qk_mask);
}

torch::Tensor DenseAttention::attend(torch::Tensor q, torch::Tensor k, torch::Tensor v, const Rope& rope,
                                     const torch::Tensor& qk_mask) const {
  q = rope.apply(q);
  k = rope.apply(k);
  if (qk_mask.defined()) {
    q = q * qk_mask;
    k = k * qk_mask;
  }
  const int group = n_heads_ / n_kv_heads_;
  if (group > 1) {
    k = k.repeat_interleave(group, 2);
    v = v.repeat_interleave(group, 2);
  }
  auto out = dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal_);  // [B, H, T, hd]
  return out.transpose(1, 2);                                                             // [B, T, H, hd]
}

torch::Tensor DenseAttention::project(const torch::Tensor& heads, ForwardContext& ctx, const BlockTapNames& taps) {
  auto mixed = heads.reshape({heads.size(0), heads.size(1), n_heads_ * head_dim_});
  ctx.tap(taps.attn_ctx, mixed);
  auto y = wo(mixed);
  ctx.tap(taps.attn_out, y);
  return y;
}

torch::Tensor DenseAttention::forward(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx,
                                      const BlockTapNames& taps) {
  return project(head_outputs(x, rope, ctx, taps), ctx, taps);
}

std::shared_ptr<Attention> make_attention(const ModelOptions& o, int layer) {
  if (o.attention == "dense") return std::make_shared<DenseAttention>(o);
  if (o.attention == "mohd") return std::make_shared<MohdAttention>(o);
  if (o.attention == "moh") return std::make_shared<MohAttention>(o, layer);
  if (o.attention == "tomoe") return std::make_shared<TomoeAttention>(o, layer);
  throw Error("unknown model.attention kind '" + o.attention + "'");
}

}  // namespace moxlab
