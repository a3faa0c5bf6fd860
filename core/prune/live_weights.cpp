#include "core/prune/live_weights.h"

#include "core/prune/dense_layers.h"

namespace moxlab {

namespace {
torch::Tensor nonzero_rows(const torch::nn::Linear& lin) {
  auto nz = lin->weight.ne(0).any(1);
  if (lin->bias.defined()) nz = nz.logical_or(lin->bias.ne(0));
  return nz;
}
torch::Tensor nonzero_cols(const torch::nn::Linear& lin) { return lin->weight.ne(0).any(0); }
// Non-zero weights of the rows (or columns) where `live` holds.
std::int64_t live_rows(const torch::nn::Linear& lin, const torch::Tensor& live) {
  return (lin->weight.ne(0).sum(1) * live.reshape(-1)).sum().item<std::int64_t>();
}
std::int64_t live_cols(const torch::nn::Linear& lin, const torch::Tensor& live) {
  return (lin->weight.ne(0).sum(0) * live.reshape(-1)).sum().item<std::int64_t>();
}
// [X, hd] per dimension -> [X, hd / 2] per interleaved RoPE pair (2i, 2i + 1), and back.
torch::Tensor any_of_pair(const torch::Tensor& t) { return t.reshape({t.size(0), -1, 2}).any(2); }
torch::Tensor per_dim(const torch::Tensor& pairs) { return pairs.repeat_interleave(2, 1); }

std::int64_t live_attention(DenseAttention& a) {
  const std::int64_t heads = a.n_heads(), kv_heads = a.n_kv_heads(), group = heads / kv_heads;
  const std::int64_t hd = a.wq->weight.size(0) / heads;
  const auto q = nonzero_rows(a.wq).reshape({heads, hd});
  const auto k = nonzero_rows(a.wk).reshape({kv_heads, hd});
  const auto v = nonzero_rows(a.wv).reshape({kv_heads, hd});
  const auto o = nonzero_cols(a.wo).reshape({heads, hd});
  const auto o_live = o.logical_and(v.repeat_interleave(group, 0));             // [H, hd]
  const auto v_live = v.logical_and(o_live.reshape({kv_heads, group, hd}).any(1));  // [Hkv, hd]
  const auto head_live = o_live.any(1, /*keepdim=*/true);                        // [H, 1]
  const auto qk_pair_live =                                                      // [H, hd / 2]
      any_of_pair(q).logical_and(any_of_pair(k).repeat_interleave(group, 0)).logical_and(head_live);
  const auto q_live = q.logical_and(per_dim(qk_pair_live));
  const auto k_live = k.logical_and(per_dim(qk_pair_live.reshape({kv_heads, group, hd / 2}).any(1)));
  return live_rows(a.wq, q_live) + live_rows(a.wk, k_live) + live_rows(a.wv, v_live) + live_cols(a.wo, o_live);
}

std::int64_t live_swiglu(SwiGLU& f) {
  const auto live = nonzero_rows(f.w1).logical_and(nonzero_rows(f.w3)).logical_and(nonzero_cols(f.w2));
  return live_rows(f.w1, live) + live_rows(f.w3, live) + live_cols(f.w2, live);
}
}  // namespace

MatrixWeights live_matrix_weights(Transformer& model) {
  torch::NoGradGuard no_grad;
  MatrixWeights out;
  for (int l = 0; l < model.options().n_layers; ++l) {
    auto& a = dense_attention(model, l);
    auto& f = dense_swiglu(model, l);
    out.live += live_attention(a) + live_swiglu(f);
    for (const auto* lin : {&a.wq, &a.wk, &a.wv, &a.wo, &f.w1, &f.w2, &f.w3}) out.total += (*lin)->weight.numel();
  }
  return out;
}

}  // namespace moxlab
