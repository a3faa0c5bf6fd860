#include "core/engine/tomoe_moe_plan.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "core/engine/kv_cache.h"
#include "core/engine/ops.h"
#include "kernels/fused/head_dim_masked_matmul.h"
#include "kernels/fused/layer_norm_gelu.h"
#include "kernels/runtime/row_parallel.h"
#include "kernels/sparse/top_k_mask.h"

namespace moxlab {

TomoeMoePlan::TomoeMoePlan(TomoeMoeWeights weights) : w_(std::move(weights)) {
  w_.check();
  for (const auto& [name, t] : w_.tensors)
    require(t.is_cpu() && t.scalar_type() == torch::kFloat, "ToMoE MoE: tensor '" + name + "' is not float32 on the CPU");
  const Rope full(w_.options.head_dim(), w_.options.max_seq_len, w_.options.rope_theta);
  qk_rope_.clear();
  attn_.clear();
  router_.clear();
  experts_.clear();
  auto pack = [](const torch::Tensor& w) { return packed_weight(pack_weight(w), w.size(0)); };
  head_ = pack(w_.tensors.count("output") ? w_.at("output") : w_.at("tok_embeddings"));
  for (int l = 0; l < w_.options.n_layers; ++l) {
    qk_rope_.push_back(full.select_pairs(w_.at(tomoe_moe_key(l, "attn.qk_pairs")).to(torch::kLong)));
    const auto &wq = w_.at(tomoe_moe_key(l, "attn.wq")), &wk = w_.at(tomoe_moe_key(l, "attn.wk")), &wv = w_.at(tomoe_moe_key(l, "attn.wv"));
    const auto &proj = w_.at(tomoe_moe_key(l, "attn.vo_proj.weight")), &proj_bias = w_.at(tomoe_moe_key(l, "attn.vo_proj.bias"));
    // W_O by kept dims only where the v/o top-K keeps at most 5/8 of them: the dim-by-dim product loads
    // and stores its outputs once per kept dim, so above that it costs as much as the dense one
    // (docs/decisions/2026-11-26-tomoe-masked-wo.md).
    const auto& wo = w_.at(tomoe_moe_key(l, "attn.wo"));
    const bool by_dim = w_.at(tomoe_moe_key(l, "attn.vo_top_k")).item<float>() * 8 <= w_.options.head_dim() * 5;
    attn_.push_back({pack(torch::cat({wq, wk, wv, proj})),
                     torch::cat({torch::zeros({wq.size(0) + wk.size(0) + wv.size(0)}, proj_bias.options()), proj_bias}),
                     by_dim ? packed_weight(pack_head_dim_major(wo, w_.options.n_heads), w_.options.dim) : pack(wo), by_dim,
                     pack(w_.at(tomoe_moe_key(l, "attn.vo_dec.weight")))});
    router_.push_back(pack(w_.at(tomoe_moe_key(l, "ffn.router"))));
    const auto &gate = w_.at(tomoe_moe_key(l, "ffn.w_gate")), &up = w_.at(tomoe_moe_key(l, "ffn.w_up")), &down = w_.at(tomoe_moe_key(l, "ffn.w_down"));
    const auto widths = w_.at(tomoe_moe_key(l, "ffn.widths")).to(torch::kLong);
    require(widths.numel() == gate.size(0) && widths.max().item<std::int64_t>() <= gate.size(1) && widths.min().item<std::int64_t>() >= 0,
            "ToMoE MoE: layer " + std::to_string(l) + " has expert widths outside its stacked weights");
    std::vector<Expert> layer;
    for (std::int64_t e = 0; e < gate.size(0); ++e) {
      const auto w = widths[e].item<std::int64_t>();
      layer.push_back({packed_weight(pack_swiglu_weight(gate[e].narrow(0, 0, w), up[e].narrow(0, 0, w)), w, true),
                       pack(down[e].narrow(1, 0, w)), w});
    }
    experts_.push_back(std::move(layer));
  }
}

torch::Tensor TomoeMoePlan::attention(int l, const torch::Tensor& h, KvCache* cache) const {
  torch::NoGradGuard no_grad;
  auto w = [&](const std::string& name) -> const torch::Tensor& { return w_.at(tomoe_moe_key(l, name)); };
  const int hd = w_.options.head_dim(), H = w_.options.n_heads, Hkv = w_.options.n_kv_heads;
  const auto B = h.size(0), T = h.size(1), M = B * T;
  const auto x = h.reshape({M, w_.options.dim}).contiguous();
  // Q, K (kept q/k pairs), V and the v/o router's Proj_E as one product (column slices of it), and the
  // router's rest: each token's top-K v/o dims (Eq. 5's inference form, the same in every head). All on
  // each thread's own rows in one parallel region.
  const auto qk = w("attn.qk_pairs").size(0) * 2, n_e = w("attn.vo_proj.weight").size(0);
  const auto top = static_cast<std::int64_t>(w("attn.vo_top_k").item<float>());
  const AttentionWeights& aw = attn_[l];
  auto all = torch::empty({M, aw.in.n}, x.options());
  auto mask = torch::empty({M, hd}, x.options());
  const std::int64_t e_col = aw.in.n - n_e;
  ProductOptions in_opt;
  in_opt.bias = aw.in_bias.data_ptr<float>();
  ProductOptions dec_opt;
  dec_opt.bias = w("attn.vo_dec.bias").data_ptr<float>();
  const float *ln_w = w("attn.vo_norm.weight").data_ptr<float>(), *ln_b = w("attn.vo_norm.bias").data_ptr<float>();
  // Rows a..z after the product: the router's embedding columns through LayerNorm and GeLU in place, then
  // the decoder reading them there, then the top-K.
  auto route_rows = [&](std::int64_t a, std::int64_t z) {
    float* e = all.data_ptr<float>() + a * aw.in.n + e_col;
    layer_norm_gelu_rows(e, z - a, aw.in.n, n_e, ln_w, ln_b, 1e-5f);
    std::vector<float> scores(static_cast<std::size_t>((z - a) * aw.decode.n));
    packed_matmul({e, aw.in.n}, z - a, aw.decode, {scores.data(), aw.decode.n}, dec_opt);
    top_k_mask_rows(scores.data(), z - a, aw.decode.n, top, mask.data_ptr<float>() + a * hd, hd);
  };
  if (M <= kRowGrain) {  // a decode step: the product split by the weight's panels, the rest on one thread
    parallel_packed_matmul(row_map(x), M, aw.in, row_map(all), in_opt);
    route_rows(0, M);
  } else {
    parallel_row_ranges(M, kRowGrain, [&](std::int64_t a, std::int64_t z) {
      packed_matmul(row_map(x.narrow(0, a, z - a)), z - a, aw.in, row_map(all.narrow(0, a, z - a)), in_opt);
      route_rows(a, z);
    });
  }
  auto q = all.narrow(1, 0, H * qk).view({B, T, H, qk});
  auto k = all.narrow(1, H * qk, Hkv * qk).view({B, T, Hkv, qk});
  auto v = all.narrow(1, (H + Hkv) * qk, Hkv * hd).view({B, T, Hkv, hd});
  KvCache::Entry* past = cache ? &cache->at(&qk_rope_[l]) : nullptr;
  const std::int64_t start = past ? past->length() : 0;
  if (qk > 0) {  // with no q/k dims left every score is 0: uniform (causal) attention
    q = engine::rope_apply(qk_rope_[l], q, start);
    k = engine::rope_apply(qk_rope_[l], k, start);
  }
  if (past) std::tie(k, v) = append_kv(*past, k, v);
  // Eq. 4 with the kept q/k pairs; softmax scale of the full head width; each token's v/o mask applied to
  // its heads' outputs as the kernel stores them.
  const auto heads = engine::attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), w_.options.causal,
                                           1.0 / std::sqrt(static_cast<double>(hd)), {}, mask.view({B, T, hd}))
                         .transpose(1, 2)
                         .reshape({M, H * hd})
                         .contiguous();  // already so from the fused kernel ([B, T, H, hd])
  // The masked heads through W_O, multiplying only each row's kept dims (the mask's zeros are half the
  // product at p = 0.5; kernels/fused/head_dim_masked_matmul.h), or whole where the mask keeps most dims.
  auto y = torch::empty({M, w_.options.dim}, x.options());
  if (!aw.out_by_dim) {
    parallel_packed_matmul(row_map(heads), M, aw.out, row_map(y));
    return y.view({B, T, w_.options.dim});
  }
  const float* kept = mask.data_ptr<float>();
  if (M <= kRowGrain) {  // a decode step: split by the weight's panels
    parallel_panel_parts(aw.out, [&](const PackedWeight& part, std::int64_t column) {
      head_dim_masked_matmul(row_map(heads), M, part, H, kept, hd, {y.data_ptr<float>() + column, y.stride(0)});
    });
  } else {
    parallel_row_ranges(M, kRowGrain, [&](std::int64_t a, std::int64_t z) {
      head_dim_masked_matmul(row_map(heads.narrow(0, a, z - a)), z - a, aw.out, H, kept + a * hd, hd, row_map(y.narrow(0, a, z - a)));
    });
  }
  return y.view({B, T, w_.options.dim});
}

torch::Tensor TomoeMoePlan::feed_forward(int l, const torch::Tensor& h) const {
  torch::NoGradGuard no_grad;
  // Each token through its expert (Eq. 2-3), only the expert's channels. The router's logits and each
  // token's expert (argmax) on each thread's rows; the tokens counted into expert order; then every thread
  // takes its own contiguous rows of that order and runs their experts' SwiGLU products, reading the
  // tokens' rows in place and writing the results straight to them (disjoint rows across threads).
  const auto h2 = h.reshape({-1, w_.options.dim}).contiguous();
  const std::int64_t M = h2.size(0), n_experts = static_cast<std::int64_t>(experts_[l].size());
  auto logits = torch::empty({M, n_experts}, h2.options());
  std::vector<std::int64_t> route(static_cast<std::size_t>(M));
  parallel_row_ranges(M, kRowGrain, [&](std::int64_t a, std::int64_t z) {
    packed_matmul(row_map(h2.narrow(0, a, z - a)), z - a, router_[l], row_map(logits.narrow(0, a, z - a)));
    const float* lp = logits.data_ptr<float>();
    for (std::int64_t r = a; r < z; ++r) {
      const float* row = lp + r * n_experts;
      route[static_cast<std::size_t>(r)] = std::max_element(row, row + n_experts) - row;  // the first maximum, as argmax
    }
  });
  // Counting sort: expert e's tokens are order[first[e] .. first[e + 1]), in token order.
  std::vector<std::int64_t> first(static_cast<std::size_t>(n_experts) + 1, 0), order(static_cast<std::size_t>(M));
  for (const auto e : route) ++first[static_cast<std::size_t>(e) + 1];
  for (std::int64_t e = 0; e < n_experts; ++e) first[e + 1] += first[e];
  std::vector<std::int64_t> next(first.begin(), first.end() - 1);
  for (std::int64_t t = 0; t < M; ++t) order[static_cast<std::size_t>(next[route[t]]++)] = t;
  auto y = torch::empty_like(h2);
  const RowMap tokens_in = row_map(h2), tokens_out = row_map(y);
  // Rows a..z of the expert order through their experts, each product single-threaded (inside a row
  // region) or split by the weight's panels (a decode step's few rows).
  using Product = void (*)(const RowMap&, std::int64_t, const PackedWeight&, const RowMap&, const ProductOptions&);
  auto run_experts = [&](std::int64_t a, std::int64_t z, Product product) {
    torch::Tensor hidden;  // the SwiGLU activations, reused across the experts
    for (std::int64_t e = 0; e < n_experts; ++e) {
      const auto lo = std::max(a, first[e]), hi = std::min(z, first[e + 1]);
      if (hi <= lo) continue;
      const Expert& ex = experts_[l][e];
      const RowMap in{tokens_in.data, tokens_in.stride, order.data() + lo}, out{tokens_out.data, tokens_out.stride, order.data() + lo};
      if (ex.width == 0) {
        for (std::int64_t r = 0; r < hi - lo; ++r) std::fill(out.row(r), out.row(r) + w_.options.dim, 0.0f);
        continue;
      }
      if (!hidden.defined() || hidden.numel() < (hi - lo) * ex.width) hidden = torch::empty({(z - a) * ex.width}, h2.options());
      const RowMap act{hidden.data_ptr<float>(), ex.width};
      product(in, hi - lo, ex.gate_up, act, {});
      product(act, hi - lo, ex.down, out, {});
    }
  };
  if (M <= kRowGrain) run_experts(0, M, parallel_packed_matmul);
  else parallel_row_ranges(M, kRowGrain, [&](std::int64_t a, std::int64_t z) { run_experts(a, z, packed_matmul); });
  return y.view(h.sizes());
}

torch::Tensor TomoeMoePlan::forward(const torch::Tensor& tokens, KvCache* cache, bool last_logits_only) const {
  torch::NoGradGuard no_grad;
  const auto B = tokens.size(0), T = tokens.size(1);
  auto x = w_.at("tok_embeddings").index_select(0, tokens.flatten()).view({B, T, w_.options.dim});
  // Each residual add fused into the norm after it (add_rms_norm), but the last: the final norm may read
  // only the last position.
  auto x_normed = w_.options.n_layers > 0 ? engine::rms_norm(x, w_.at(tomoe_moe_key(0, "attn_norm")), w_.options.norm_eps) : x;
  for (int l = 0; l < w_.options.n_layers; ++l) {
    const auto [h, h_normed] = engine::add_rms_norm(x, attention(l, x_normed, cache), w_.at(tomoe_moe_key(l, "ffn_norm")), w_.options.norm_eps);
    const auto f = feed_forward(l, h_normed);
    if (l + 1 < w_.options.n_layers) std::tie(x, x_normed) = engine::add_rms_norm(h, f, w_.at(tomoe_moe_key(l + 1, "attn_norm")), w_.options.norm_eps);
    else x = h + f;
  }
  if (last_logits_only) x = x.narrow(1, T - 1, 1);
  x = engine::rms_norm(x, w_.at("norm"), w_.options.norm_eps);
  return packed_linear(x, head_);
}

}  // namespace moxlab
