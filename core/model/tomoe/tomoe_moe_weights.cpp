#include "core/model/tomoe/tomoe_moe_weights.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/model/tomoe/tomoe_modules.h"
#include "core/model/tomoe/tomoe_trace.h"
#include "core/model/transformer.h"

namespace moxlab {

std::string tomoe_moe_key(int l, const std::string& name) { return "layers." + std::to_string(l) + "." + name; }

const torch::Tensor& TomoeMoeWeights::at(const std::string& name) const {
  auto it = tensors.find(name);
  require(it != tensors.end(), "ToMoE MoE: no tensor '" + name + "'");
  return it->second;
}

void TomoeMoeWeights::check() const {
  const TomoeMoeWeights& m = *this;
  m.at("tok_embeddings");
  m.at("norm");
  for (int l = 0; l < m.options.n_layers; ++l)
    for (const char* name : {"attn_norm", "ffn_norm", "attn.qk_pairs", "attn.wq", "attn.wk", "attn.wv", "attn.wo",
                             "attn.vo_proj.weight", "attn.vo_proj.bias", "attn.vo_norm.weight", "attn.vo_norm.bias",
                             "attn.vo_dec.weight", "attn.vo_dec.bias", "attn.vo_top_k", "ffn.router", "ffn.w_gate",
                             "ffn.w_up", "ffn.w_down", "ffn.widths"})
      m.at(tomoe_moe_key(l, name));  // a missing tensor is a one-line error naming it
}

TomoeMoeWeights extract_tomoe_moe(Transformer& model) {
  const ModelOptions& o = model.options();
  require(o.attention == "tomoe" && o.ffn == "tomoe", "ToMoE export needs attention and FFN of kind tomoe");
  require(!o.qkv_bias, "ToMoE export: Q/K/V biases are not supported");
  model.eval();
  torch::NoGradGuard no_grad;
  // One deterministic pass gives the static decisions: q/k mask, expert masks (eval: no noise).
  Analysis an;
  model.forward(torch::zeros({1, 2}, torch::kLong), an);
  const TomoeTrace& trace = an.tomoe;
  const torch::Tensor experts = trace.experts;  // [L, N, d_e]
  TomoeMoeWeights m;
  m.options = o;
  const int hd = o.head_dim(), H = o.n_heads, Hkv = o.n_kv_heads, d = o.dim;
  m.tensors["tok_embeddings"] = model.tok_embeddings->weight.detach().clone();
  m.tensors["norm"] = model.norm->weight.detach().clone();
  if (model.output) m.tensors["output"] = model.output->weight.detach().clone();
  for (int l = 0; l < o.n_layers; ++l) {
    auto* block = model.blocks->ptr<BlockImpl>(l).get();
    auto* attn = dynamic_cast<TomoeAttention*>(block->attn.get());
    auto* ffn = dynamic_cast<TomoeFeedForward*>(block->ffn.get());
    require(attn && ffn, "ToMoE export: layer " + std::to_string(l) + " is not a ToMoE layer");
    const auto k = attn->masker->inference_top_k();
    require(k.has_value(), "ToMoE export: layer " + std::to_string(l) + " has no v/o top-K (convert the model first)");
    m.tensors[tomoe_moe_key(l, "attn_norm")] = block->attn_norm->weight.detach().clone();
    m.tensors[tomoe_moe_key(l, "ffn_norm")] = block->ffn_norm->weight.detach().clone();
    // Attention: only the kept q/k RoPE pairs.
    const auto pair_kept = trace.attention[l].qk.view({hd / 2, 2}).select(1, 0) > 0.5;
    const auto pairs = pair_kept.nonzero().squeeze(1);
    const auto dims = torch::stack({2 * pairs, 2 * pairs + 1}, 1).flatten();
    m.tensors[tomoe_moe_key(l, "attn.qk_pairs")] = pairs.to(torch::kFloat);
    m.tensors[tomoe_moe_key(l, "attn.wq")] = attn->wq->weight.detach().view({H, hd, d}).index_select(1, dims).reshape({-1, d});
    m.tensors[tomoe_moe_key(l, "attn.wk")] = attn->wk->weight.detach().view({Hkv, hd, d}).index_select(1, dims).reshape({-1, d});
    m.tensors[tomoe_moe_key(l, "attn.wv")] = attn->wv->weight.detach().clone();
    m.tensors[tomoe_moe_key(l, "attn.wo")] = attn->wo->weight.detach().clone();
    // The v/o router: Proj_E with the mean expert embedding folded into its bias; the decoder's v/o rows.
    const auto& mk = *attn->masker;
    m.tensors[tomoe_moe_key(l, "attn.vo_proj.weight")] = mk.proj_e->weight.detach().clone();
    m.tensors[tomoe_moe_key(l, "attn.vo_proj.bias")] = (mk.proj_e->bias + experts[l].mean(0)).detach();
    m.tensors[tomoe_moe_key(l, "attn.vo_norm.weight")] = mk.dec_norm->weight.detach().clone();
    m.tensors[tomoe_moe_key(l, "attn.vo_norm.bias")] = mk.dec_norm->bias.detach().clone();
    m.tensors[tomoe_moe_key(l, "attn.vo_dec.weight")] = mk.dec->weight.detach().narrow(0, 0, hd).clone();
    m.tensors[tomoe_moe_key(l, "attn.vo_dec.bias")] = mk.dec->bias.detach().narrow(0, 0, hd).clone();
    m.tensors[tomoe_moe_key(l, "attn.vo_top_k")] = torch::tensor({static_cast<float>(*k)});
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
    m.tensors[tomoe_moe_key(l, "ffn.router")] = ffn->expert_router->router->weight.detach().clone();
    m.tensors[tomoe_moe_key(l, "ffn.w_gate")] = gate;
    m.tensors[tomoe_moe_key(l, "ffn.w_up")] = up;
    m.tensors[tomoe_moe_key(l, "ffn.w_down")] = down;
    m.tensors[tomoe_moe_key(l, "ffn.widths")] = widths.to(torch::kFloat);
  }
  return m;
}

ParamCount TomoeMoeWeights::param_count() const {
  ParamCount c;
  const std::int64_t d = options.dim;
  for (const auto& [name, t] : tensors) {
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
  for (int l = 0; l < options.n_layers; ++l) {
    const auto K = static_cast<std::int64_t>(at(tomoe_moe_key(l, "attn.vo_top_k")).item<float>());
    c.active += (options.n_kv_heads + options.n_heads) * K * d;                  // W_V rows and W_O columns of the top-K dims
    c.active += 3 * d * static_cast<std::int64_t>(at(tomoe_moe_key(l, "ffn.widths")).max().item<float>());  // widest expert
  }
  return c;
}

}  // namespace moxlab
