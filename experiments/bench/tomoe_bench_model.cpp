#include "experiments/bench/tomoe_bench_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/common/error.h"
#include "core/model/transformer.h"

namespace moxlab {

namespace {
// `count` of `n` indices, random, ascending.
torch::Tensor random_subset(std::int64_t n, std::int64_t count) {
  return std::get<0>(torch::randperm(n, torch::kLong).narrow(0, 0, count).sort());
}
}  // namespace

TomoeMoeWeights random_tomoe_moe(const ModelOptions& options, double keep, std::uint64_t seed) {
  require(keep > 0 && keep <= 1, "ToMoE bench model: keep must be in (0, 1]");
  ModelOptions o = options;
  o.attention = o.ffn = "tomoe";
  ModelOptions dense_options = options;
  dense_options.attention = dense_options.ffn = "dense";
  Transformer dense(dense_options);
  dense.init_weights(seed);
  torch::NoGradGuard ng;
  const std::int64_t d = o.dim, hd = o.head_dim(), H = o.n_heads, Hkv = o.n_kv_heads, mid = o.resolved_ffn_hidden();
  const std::int64_t de = o.tomoe.embedding(), experts = o.tomoe.experts;
  const std::int64_t pairs = std::max<std::int64_t>(1, std::llround(keep * hd / 2));
  const std::int64_t top_k = std::max<std::int64_t>(1, std::llround(keep * hd));
  const std::int64_t width = std::max<std::int64_t>(1, std::llround(keep * mid));
  std::map<std::string, torch::Tensor> t;
  auto key = [](int l, const std::string& name) { return "layers." + std::to_string(l) + "." + name; };
  t["tok_embeddings"] = dense.tok_embeddings->weight.detach().clone();
  t["norm"] = dense.norm->weight.detach().clone();
  for (int l = 0; l < o.n_layers; ++l) {
    auto* block = dense.blocks->ptr<BlockImpl>(l).get();
    auto* attn = dynamic_cast<DenseAttention*>(block->attn.get());
    auto* ffn = dynamic_cast<SwiGLU*>(block->ffn.get());
    t[key(l, "attn_norm")] = block->attn_norm->weight.detach().clone();
    t[key(l, "ffn_norm")] = block->ffn_norm->weight.detach().clone();
    const auto kept = random_subset(hd / 2, pairs);
    const auto dims = torch::stack({2 * kept, 2 * kept + 1}, 1).flatten();
    t[key(l, "attn.qk_pairs")] = kept.to(torch::kFloat);
    t[key(l, "attn.wq")] = attn->wq->weight.detach().view({H, hd, d}).index_select(1, dims).reshape({-1, d});
    t[key(l, "attn.wk")] = attn->wk->weight.detach().view({Hkv, hd, d}).index_select(1, dims).reshape({-1, d});
    t[key(l, "attn.wv")] = attn->wv->weight.detach().clone();
    t[key(l, "attn.wo")] = attn->wo->weight.detach().clone();
    t[key(l, "attn.vo_proj.weight")] = torch::randn({de, d}) / std::sqrt(static_cast<double>(d));
    t[key(l, "attn.vo_proj.bias")] = torch::zeros({de});
    t[key(l, "attn.vo_norm.weight")] = torch::ones({de});
    t[key(l, "attn.vo_norm.bias")] = torch::zeros({de});
    t[key(l, "attn.vo_dec.weight")] = torch::randn({hd, de}) / std::sqrt(static_cast<double>(de));
    t[key(l, "attn.vo_dec.bias")] = torch::zeros({hd});
    t[key(l, "attn.vo_top_k")] = torch::tensor({static_cast<float>(top_k)});
    auto gate = torch::empty({experts, width, d}), up = torch::empty({experts, width, d}), down = torch::empty({experts, d, width});
    for (std::int64_t e = 0; e < experts; ++e) {
      const auto channels = random_subset(mid, width);
      gate[e].copy_(ffn->w1->weight.detach().index_select(0, channels));
      up[e].copy_(ffn->w3->weight.detach().index_select(0, channels));
      down[e].copy_(ffn->w2->weight.detach().index_select(1, channels));
    }
    t[key(l, "ffn.router")] = torch::randn({experts, d}) / std::sqrt(static_cast<double>(d));
    t[key(l, "ffn.w_gate")] = gate;
    t[key(l, "ffn.w_up")] = up;
    t[key(l, "ffn.w_down")] = down;
    t[key(l, "ffn.widths")] = torch::full({experts}, static_cast<float>(width));
  }
  TomoeMoeWeights w{o, std::move(t)};
  w.check();
  return w;
}

}  // namespace moxlab
