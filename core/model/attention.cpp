#include "core/model/attention.h"

#include <cmath>

#include "core/model/kind_modules.h"
#include "core/model/op_forms.h"

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

namespace {

// softmax(q k^T + mask) v for queries [B, Hkv, rows, hq] stacked head-major over a run of positions, keys
// [B, Hkv, Tk, hq]; `mask` [positions, n] (true = hidden) over the last n keys, or undefined.
torch::Tensor attend_rows(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask,
                          std::int64_t group) {
  auto scores = torch::matmul(q, k.transpose(-2, -1));  // [B, Hkv, rows, Tk]
  if (mask.defined())  // in place: matmul's backward does not read its output
    scores.view({q.size(0), q.size(1), group, -1, k.size(2)})
        .narrow(-1, k.size(2) - mask.size(1), mask.size(1))
        .masked_fill_(mask, -std::numeric_limits<float>::infinity());
  return torch::matmul(torch::softmax(scores, -1), v);
}

// Causal attention runs in tiles of this many query positions: a tile's scores stay in cache, and it
// multiplies only the keys up to its last position, so about half the T x T score and mixing work (all of
// it masked) is skipped. 64 measured fastest of the tile sizes tried
// (docs/decisions/2026-11-25-training-throughput.md).
constexpr std::int64_t kQueryTile = 64;

}  // namespace

torch::Tensor dot_product_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                    double scale, const torch::Tensor& gates, const torch::Tensor& dim_scales) {
  auto out = attention_core(q, k, v, causal, scale);  // [B, H, T, hd]
  if (gates.defined()) out = out * gates.transpose(1, 2).unsqueeze(-1);
  return dim_scales.defined() ? out * dim_scales.unsqueeze(1) : out;
}

torch::Tensor dot_product_attention_torch(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                          double scale) {
  const auto B = q.size(0), H = q.size(1), T = q.size(2), Hkv = k.size(1), Tk = k.size(2);
  TORCH_CHECK(H % Hkv == 0, "attention: query heads must be a multiple of key/value heads");
  TORCH_CHECK(!causal || Tk >= T, "attention: causal queries need their own keys");
  const auto group = H / Hkv;
  const double s = scale == 0 ? 1.0 / std::sqrt(static_cast<double>(q.size(-1))) : scale;
  // The query heads of one key/value head side by side, [B, Hkv, group * T, hq]: K and V are read by
  // every head of their group instead of being copied per head; the scale goes on q (T x hq, not T x T).
  const auto qs = (q * s).view({B, Hkv, group, T, q.size(3)});
  if (!causal) return attend_rows(qs.reshape({B, Hkv, group * T, q.size(3)}), k, v, {}, group).view({B, H, T, v.size(3)});
  // Query position t (key position Tk - T + t) sees keys 0 .. Tk - T + t. K and V made contiguous once,
  // so every tile's key prefix is a strided batch for the matmul instead of a copy.
  const auto past = Tk - T;
  const auto kc = k.contiguous(), vc = v.contiguous();
  auto bool_opts = torch::TensorOptions().dtype(torch::kBool).device(q.device());
  std::vector<torch::Tensor> tiles;
  for (std::int64_t t0 = 0; t0 < T; t0 += kQueryTile) {
    const auto n = std::min(kQueryTile, T - t0), keys = past + t0 + n;
    const auto rows = qs.narrow(3, t0, n).reshape({B, Hkv, group * n, q.size(3)});
    // Query i of the tile sees keys up to past + t0 + i: what it must not see lies in the tile's last n keys.
    const auto mask = torch::ones({n, n}, bool_opts).triu(1);
    tiles.push_back(attend_rows(rows, kc.narrow(2, 0, keys), vc.narrow(2, 0, keys), mask, group).view({B, Hkv, group, n, v.size(3)}));
  }
  return (tiles.size() == 1 ? tiles[0] : torch::cat(tiles, 3)).view({B, H, T, v.size(3)});
}

torch::Tensor DenseAttention::head_outputs(const torch::Tensor& x, const Rope& rope, Analysis& an,
                                           const BlockTapNames& taps, torch::Tensor* q_pre_rope,
                                           const torch::Tensor& qk_mask) {
  const auto B = x.size(0), T = x.size(1);
  an.tap(taps.attn_in, x);
  const auto q = linear(wq, x).view({B, T, n_heads_, head_dim_});
  const auto k = linear(wk, x).view({B, T, n_kv_heads_, head_dim_});
  const auto v = linear(wv, x).view({B, T, n_kv_heads_, head_dim_});
  an.tap(taps.attn_q, q);  // before RoPE: the query content (MoH's L2 router reads this)
  an.tap(taps.attn_k, k);
  an.tap(taps.attn_v, v);
  if (q_pre_rope) *q_pre_rope = q;
  return attend(q, k, v, rope, qk_mask);
}

torch::Tensor DenseAttention::attend(torch::Tensor q, torch::Tensor k, torch::Tensor v, const Rope& rope, const torch::Tensor& qk_mask,
                                     const torch::Tensor& gates) const {
  q = rope.apply(q);
  k = rope.apply(k);
  if (qk_mask.defined()) {
    q = q * qk_mask;
    k = k * qk_mask;
  }
  auto out = dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal_, 0, gates);  // [B, H, T, hd]
  return out.transpose(1, 2);                                                             // [B, T, H, hd]
}

torch::Tensor DenseAttention::project(const torch::Tensor& heads, Analysis& an, const BlockTapNames& taps) {
  auto mixed = heads.reshape({heads.size(0), heads.size(1), n_heads_ * head_dim_});
  an.tap(taps.attn_ctx, mixed);
  auto y = linear(wo, mixed);
  an.tap(taps.attn_out, y);
  return y;
}

torch::Tensor DenseAttention::forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps,
                                      LayerIO&) {
  return project(head_outputs(x, rope, an, taps), an, taps);
}

KindModules dense_kind_modules() {
  return {[](const ModelOptions& o, int) { return std::make_shared<DenseAttention>(o); },
          [](const ModelOptions& o, int) { return std::make_shared<SwiGLU>(o); }};
}

}  // namespace moxlab
