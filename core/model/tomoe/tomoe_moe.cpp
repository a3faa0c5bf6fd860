#include "core/model/tomoe/tomoe_moe.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "core/config/config.h"
#include "core/io/safetensors.h"
#include "core/model/kv_cache.h"
#include "core/model/rmsnorm.h"
#include "core/model/tomoe/tomoe_modules.h"
#include "core/model/tomoe/tomoe_trace.h"
#include "core/model/transformer.h"
#include "kernels/fused/head_dim_masked_matmul.h"
#include "kernels/fused/layer_norm_gelu.h"
#include "kernels/runtime/row_parallel.h"
#include "kernels/sparse/top_k_mask.h"

namespace moxlab {

namespace {
constexpr const char* kConfigKey = "moxlab.tomoe_moe.config";
std::string layer_key(int l, const std::string& name) { return "layers." + std::to_string(l) + "." + name; }
}  // namespace

const torch::Tensor& TomoeMoe::at(const std::string& name) const {
  auto it = t_.find(name);
  require(it != t_.end(), "ToMoE MoE: no tensor '" + name + "'");
  return it->second;
}

TomoeMoe TomoeMoe::extract(Transformer& model) {
  const ModelOptions& o = model.options();
  require(o.attention == "tomoe" && o.ffn == "tomoe", "ToMoE export needs attention and FFN of kind tomoe");
  require(!o.qkv_bias, "ToMoE export: Q/K/V biases are not supported");
  model.eval();
  torch::NoGradGuard no_grad;
  // One deterministic pass gives the static decisions: q/k mask, expert masks (eval: no noise).
  TomoeTrace trace;
  ForwardContext ctx;
  ctx.tomoe = &trace;
  model.forward(torch::zeros({1, 2}, torch::kLong), ctx);
  const torch::Tensor experts = trace.experts;  // [L, N, d_e]
  TomoeMoe m;
  m.o_ = o;
  const int hd = o.head_dim(), H = o.n_heads, Hkv = o.n_kv_heads, d = o.dim;
  m.t_["tok_embeddings"] = model.tok_embeddings->weight.detach().clone();
  m.t_["norm"] = model.norm->weight.detach().clone();
  if (model.output) m.t_["output"] = model.output->weight.detach().clone();
  for (int l = 0; l < o.n_layers; ++l) {
    auto* block = model.blocks->ptr<BlockImpl>(l).get();
    auto* attn = dynamic_cast<TomoeAttention*>(block->attn.get());
    auto* ffn = dynamic_cast<TomoeFeedForward*>(block->ffn.get());
    require(attn && ffn, "ToMoE export: layer " + std::to_string(l) + " is not a ToMoE layer");
    const auto k = attn->masker->inference_top_k();
    require(k.has_value(), "ToMoE export: layer " + std::to_string(l) + " has no v/o top-K (convert the model first)");
    m.t_[layer_key(l, "attn_norm")] = block->attn_norm->weight.detach().clone();
    m.t_[layer_key(l, "ffn_norm")] = block->ffn_norm->weight.detach().clone();
    // Attention: only the kept q/k RoPE pairs.
    const auto pair_kept = trace.attention[l].qk.view({hd / 2, 2}).select(1, 0) > 0.5;
    const auto pairs = pair_kept.nonzero().squeeze(1);
    const auto dims = torch::stack({2 * pairs, 2 * pairs + 1}, 1).flatten();
    m.t_[layer_key(l, "attn.qk_pairs")] = pairs.to(torch::kFloat);
    m.t_[layer_key(l, "attn.wq")] = attn->wq->weight.detach().view({H, hd, d}).index_select(1, dims).reshape({-1, d});
    m.t_[layer_key(l, "attn.wk")] = attn->wk->weight.detach().view({Hkv, hd, d}).index_select(1, dims).reshape({-1, d});
    m.t_[layer_key(l, "attn.wv")] = attn->wv->weight.detach().clone();
    m.t_[layer_key(l, "attn.wo")] = attn->wo->weight.detach().clone();
    // The v/o router: Proj_E with the mean expert embedding folded into its bias; the decoder's v/o rows.
    const auto& mk = *attn->masker;
    m.t_[layer_key(l, "attn.vo_proj.weight")] = mk.proj_e->weight.detach().clone();
    m.t_[layer_key(l, "attn.vo_proj.bias")] = (mk.proj_e->bias + experts[l].mean(0)).detach();
    m.t_[layer_key(l, "attn.vo_norm.weight")] = mk.dec_norm->weight.detach().clone();
    m.t_[layer_key(l, "attn.vo_norm.bias")] = mk.dec_norm->bias.detach().clone();
    m.t_[layer_key(l, "attn.vo_dec.weight")] = mk.dec->weight.detach().narrow(0, 0, hd).clone();
    m.t_[layer_key(l, "attn.vo_dec.bias")] = mk.dec->bias.detach().narrow(0, 0, hd).clone();
    m.t_[layer_key(l, "attn.vo_top_k")] = torch::tensor({static_cast<float>(*k)});
    // MLP experts: each expert's kept channels, zero-padded to the widest.
    const auto masks = trace.mlp[l].expert_masks;  // [N, d_mid]
    const auto widths = masks.sum(1).to(torch::kLong);
    const std::int64_t n = masks.size(0), k_max = std::max<std::int64_t>(1, widths.max().item<std::int64_t>());
    auto gate = torch::zeros({n, k_max, d}), up = torch::zeros({n, k_max, d}), down = torch::zeros({n, d, k_max});
    for (std::int64_t e = 0; e < n; ++e) {
      const auto keep = masks[e].nonzero().squeeze(1);
      const auto w = keep.size(0);
      if (w == 0) continue;
      gate[e].narrow(0, 0, w).copy_(ffn->w1->weight.detach().index_select(0, keep));
      up[e].narrow(0, 0, w).copy_(ffn->w3->weight.detach().index_select(0, keep));
      down[e].narrow(1, 0, w).copy_(ffn->w2->weight.detach().index_select(1, keep));
    }
    m.t_[layer_key(l, "ffn.router")] = ffn->expert_router->router->weight.detach().clone();
    m.t_[layer_key(l, "ffn.w_gate")] = gate;
    m.t_[layer_key(l, "ffn.w_up")] = up;
    m.t_[layer_key(l, "ffn.w_down")] = down;
    m.t_[layer_key(l, "ffn.widths")] = widths.to(torch::kFloat);
  }
  m.build_derived();
  return m;
}

void TomoeMoe::build_derived() {
  for (const auto& [name, t] : t_)
    require(t.is_cpu() && t.scalar_type() == torch::kFloat, "ToMoE MoE: tensor '" + name + "' is not float32 on the CPU");
  const Rope full(o_.head_dim(), o_.max_seq_len, o_.rope_theta);
  qk_rope_.clear();
  attn_.clear();
  router_.clear();
  experts_.clear();
  auto pack = [](const torch::Tensor& w) { return packed_weight(pack_weight(w), w.size(0)); };
  head_ = pack(t_.count("output") ? at("output") : at("tok_embeddings"));
  for (int l = 0; l < o_.n_layers; ++l) {
    qk_rope_.push_back(full.select_pairs(at(layer_key(l, "attn.qk_pairs")).to(torch::kLong)));
    const auto &wq = at(layer_key(l, "attn.wq")), &wk = at(layer_key(l, "attn.wk")), &wv = at(layer_key(l, "attn.wv"));
    const auto &proj = at(layer_key(l, "attn.vo_proj.weight")), &proj_bias = at(layer_key(l, "attn.vo_proj.bias"));
    // W_O by kept dims only where the v/o top-K keeps at most 5/8 of them: the dim-by-dim product loads
    // and stores its outputs once per kept dim, so above that it costs as much as the dense one
    // (docs/decisions/2026-11-26-tomoe-masked-wo.md).
    const auto& wo = at(layer_key(l, "attn.wo"));
    const bool by_dim = at(layer_key(l, "attn.vo_top_k")).item<float>() * 8 <= o_.head_dim() * 5;
    attn_.push_back({pack(torch::cat({wq, wk, wv, proj})),
                     torch::cat({torch::zeros({wq.size(0) + wk.size(0) + wv.size(0)}, proj_bias.options()), proj_bias}),
                     by_dim ? packed_weight(pack_head_dim_major(wo, o_.n_heads), o_.dim) : pack(wo), by_dim,
                     pack(at(layer_key(l, "attn.vo_dec.weight")))});
    router_.push_back(pack(at(layer_key(l, "ffn.router"))));
    const auto &gate = at(layer_key(l, "ffn.w_gate")), &up = at(layer_key(l, "ffn.w_up")), &down = at(layer_key(l, "ffn.w_down"));
    const auto widths = at(layer_key(l, "ffn.widths")).to(torch::kLong);
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

torch::Tensor TomoeMoe::attention(int l, const torch::Tensor& h, KvCache* cache) const {
  torch::NoGradGuard no_grad;
  auto w = [&](const std::string& name) -> const torch::Tensor& { return at(layer_key(l, name)); };
  const int hd = o_.head_dim(), H = o_.n_heads, Hkv = o_.n_kv_heads;
  const auto B = h.size(0), T = h.size(1), M = B * T;
  const auto x = h.reshape({M, o_.dim}).contiguous();
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
    q = qk_rope_[l].apply(q, start);
    k = qk_rope_[l].apply(k, start);
  }
  if (past) std::tie(k, v) = append_kv(*past, k, v);
  // Eq. 4 with the kept q/k pairs; softmax scale of the full head width; each token's v/o mask applied to
  // its heads' outputs as the kernel stores them.
  const auto heads = dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), o_.causal,
                                           1.0 / std::sqrt(static_cast<double>(hd)), {}, mask.view({B, T, hd}))
                         .transpose(1, 2)
                         .reshape({M, H * hd})
                         .contiguous();  // already so from the fused kernel ([B, T, H, hd])
  // The masked heads through W_O, multiplying only each row's kept dims (the mask's zeros are half the
  // product at p = 0.5; kernels/fused/head_dim_masked_matmul.h), or whole where the mask keeps most dims.
  auto y = torch::empty({M, o_.dim}, x.options());
  if (!aw.out_by_dim) {
    parallel_packed_matmul(row_map(heads), M, aw.out, row_map(y));
    return y.view({B, T, o_.dim});
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
  return y.view({B, T, o_.dim});
}

torch::Tensor TomoeMoe::feed_forward(int l, const torch::Tensor& h) const {
  torch::NoGradGuard no_grad;
  // Each token through its expert (Eq. 2-3), only the expert's channels. The router's logits and each
  // token's expert (argmax) on each thread's rows; the tokens counted into expert order; then every thread
  // takes its own contiguous rows of that order and runs their experts' SwiGLU products, reading the
  // tokens' rows in place and writing the results straight to them (disjoint rows across threads).
  const auto h2 = h.reshape({-1, o_.dim}).contiguous();
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
        for (std::int64_t r = 0; r < hi - lo; ++r) std::fill(out.row(r), out.row(r) + o_.dim, 0.0f);
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

torch::Tensor TomoeMoe::forward(const torch::Tensor& tokens, KvCache* cache, bool last_logits_only) const {
  torch::NoGradGuard no_grad;
  const auto B = tokens.size(0), T = tokens.size(1);
  auto x = at("tok_embeddings").index_select(0, tokens.flatten()).view({B, T, o_.dim});
  // Each residual add fused into the norm after it (add_rms_norm), but the last: the final norm may read
  // only the last position.
  auto x_normed = o_.n_layers > 0 ? rms_norm(x, at(layer_key(0, "attn_norm")), o_.norm_eps) : x;
  for (int l = 0; l < o_.n_layers; ++l) {
    const auto [h, h_normed] = add_rms_norm(x, attention(l, x_normed, cache), at(layer_key(l, "ffn_norm")), o_.norm_eps);
    const auto f = feed_forward(l, h_normed);
    if (l + 1 < o_.n_layers) std::tie(x, x_normed) = add_rms_norm(h, f, at(layer_key(l + 1, "attn_norm")), o_.norm_eps);
    else x = h + f;
  }
  if (last_logits_only) x = x.narrow(1, T - 1, 1);
  x = rms_norm(x, at("norm"), o_.norm_eps);
  return packed_linear(x, head_);
}

ParamCount TomoeMoe::param_count() const {
  ParamCount c;
  const std::int64_t d = o_.dim;
  for (const auto& [name, t] : t_) {
    if (name == "tok_embeddings" || name == "output") continue;
    const bool index = name.find("qk_pairs") != std::string::npos || name.find("vo_top_k") != std::string::npos ||
                       name.find("widths") != std::string::npos;
    if (index) continue;
    c.total += t.numel();
    if (name.find("attn.wv") != std::string::npos || name.find("attn.wo") != std::string::npos ||
        name.find("ffn.w_") != std::string::npos)
      continue;  // counted below by what a token uses
    c.active += t.numel();
  }
  for (int l = 0; l < o_.n_layers; ++l) {
    const auto K = static_cast<std::int64_t>(at(layer_key(l, "attn.vo_top_k")).item<float>());
    c.active += (o_.n_kv_heads + o_.n_heads) * K * d;                  // W_V rows and W_O columns of the top-K dims
    c.active += 3 * d * static_cast<std::int64_t>(at(layer_key(l, "ffn.widths")).max().item<float>());  // widest expert
  }
  return c;
}

void TomoeMoe::save(const std::string& path) const {
  Config c;
  c.model = o_;
  c.train.seq_len = std::min(c.train.seq_len, o_.max_seq_len);  // only the model options matter here
  write_safetensors(path, t_, {{kConfigKey, c.to_json()}});
}

TomoeMoe TomoeMoe::load(const std::string& path) {
  SafeTensors st = read_safetensors(path);
  auto it = st.metadata.find(kConfigKey);
  require(it != st.metadata.end(), path + " is not a ToMoE MoE export (no " + kConfigKey + " metadata)");
  return from_tensors(config_from_json(it->second).model, std::move(st.tensors));
}

TomoeMoe TomoeMoe::from_tensors(const ModelOptions& o, std::map<std::string, torch::Tensor> tensors) {
  TomoeMoe m;
  m.o_ = o;
  m.t_ = std::move(tensors);
  m.at("tok_embeddings");
  m.at("norm");
  for (int l = 0; l < m.o_.n_layers; ++l)
    for (const char* name : {"attn_norm", "ffn_norm", "attn.qk_pairs", "attn.wq", "attn.wk", "attn.wv", "attn.wo",
                             "attn.vo_proj.weight", "attn.vo_proj.bias", "attn.vo_norm.weight", "attn.vo_norm.bias",
                             "attn.vo_dec.weight", "attn.vo_dec.bias", "attn.vo_top_k", "ffn.router", "ffn.w_gate",
                             "ffn.w_up", "ffn.w_down", "ffn.widths"})
      m.at(layer_key(l, name));  // a missing tensor is a one-line error naming it
  m.build_derived();
  return m;
}

}  // namespace moxlab
