#include "core/model/tomoe/tomoe_conversion.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "core/model/tomoe/tomoe_modules.h"
#include "core/model/tomoe/tomoe_trace.h"

namespace moxlab {

namespace {
// |s_i AND s_j| / |s_i OR s_j| of every pair of expert masks [N, d_mid] (1 on the diagonal): Fig. 9.
torch::Tensor pairwise_jaccard(const torch::Tensor& masks) {
  const auto m = masks.to(torch::kDouble);
  auto inter = torch::matmul(m, m.t());  // [N, N]
  auto sizes = m.sum(1);
  auto uni = sizes.unsqueeze(0) + sizes.unsqueeze(1) - inter;
  return (inter / uni.clamp_min(1.0)).fill_diagonal_(1.0);
}
// Mean over expert pairs i < j of the Jaccard similarity (1 for a single expert).
double mean_off_diagonal(const torch::Tensor& j) {
  const std::int64_t n = j.size(0);
  if (n < 2) return 1.0;
  return (j.sum().item<double>() - j.diagonal().sum().item<double>()) / static_cast<double>(n * (n - 1));
}

bool is_dense_matrix(const std::string& name) {
  for (const char* m : {".wq.", ".wk.", ".wv.", ".wo.", ".w1.", ".w2.", ".w3."})
    if (name.find(m) != std::string::npos) return true;
  return false;
}
}  // namespace

TomoeConversion convert_to_tomoe_moe(Transformer& model, const std::vector<torch::Tensor>& calibration, const ForwardPass& pass_arg) {
  const ModelOptions& o = model.options();
  require(o.is_tomoe(), "ToMoE conversion needs a ToMoE model (model.attention or model.ffn = tomoe)");
  require(!calibration.empty(), "ToMoE conversion needs calibration tokens");
  model.eval();
  torch::NoGradGuard no_grad;
  const ForwardPass pass = pass_arg ? pass_arg : ForwardPass([&model](const torch::Tensor& t, Analysis& an) { model.forward(t, an); });
  const int L = o.n_layers;
  std::vector<TomoeAttention*> attn(L, nullptr);
  for (int l = 0; l < L; ++l) attn[l] = dynamic_cast<TomoeAttention*>(model.blocks->ptr<BlockImpl>(l)->attn.get());

  // tomoe.conversion (tomoe_options.h). "code": expert and q/k masks frozen from one draw with the training
  // noise, K_l = the widest token's kept count under training noise averaged over calibration batches.
  // "paper": noise-free masks frozen, K_l = round(mean kept count) of the noise-free v/o masks (section 3.3).
  const bool code = o.tomoe.conversion == "code";
  require(code || o.tomoe.conversion == "paper", "tomoe.conversion must be code or paper, got " + o.tomoe.conversion);
  const torch::Tensor experts = model.hypernet->forward();  // [L, N, d_e]: deterministic (Eq. 1)
  std::vector<torch::Tensor> drawn(L);  // the experts' channels as trained, before tomoe.expert_widths grows them
  for (int l = 0; l < L; ++l) {
    auto* block = model.blocks->ptr<BlockImpl>(l).get();
    if (attn[l]) attn[l]->masker->freeze_qk(experts[l], code);
    if (auto* ffn = dynamic_cast<TomoeFeedForward*>(block->ffn.get())) drawn[l] = ffn->expert_router->freeze_masks(experts[l], code);
  }
  std::vector<double> kept(L, 0.0);
  double units = 0;  // batches (code) or tokens (paper) that kept[] sums over
  model.train(code);  // training mode draws the v/o gates' Gumbel noise; the model has no dropout
  for (const auto& batch : calibration) {
    Analysis an;
    pass(batch, an);
    const TomoeTrace& trace = an.tomoe;
    for (int l = 0; l < L; ++l) {
      if (!attn[l]) continue;
      const auto counts = trace.attention[l].vo.to(torch::kDouble).reshape({-1, o.head_dim()}).sum(-1);
      kept[l] += code ? counts.max().item<double>() : counts.sum().item<double>();
    }
    units += code ? 1.0 : static_cast<double>(batch.numel());
  }
  model.eval();
  TomoeConversion c;
  for (int l = 0; l < L; ++l) {
    if (!attn[l]) continue;
    const int k = std::clamp(static_cast<int>(std::lround(kept[l] / units)), 1, o.head_dim());
    attn[l]->masker->set_inference_top_k(k);
  }

  // The converted model: its widths no longer depend on the tokens; which v/o dims are used does.
  TomoeTrace trace;
  std::vector<torch::Tensor> vo_used(L);
  for (const auto& batch : calibration) {
    Analysis an;
    pass(batch, an);
    trace = std::move(an.tomoe);
    for (int l = 0; l < L; ++l) {
      if (!attn[l]) continue;
      auto used = trace.attention[l].vo.reshape({-1, o.head_dim()}).amax(0);
      vo_used[l] = vo_used[l].defined() ? torch::maximum(vo_used[l], used) : used;
    }
  }
  const auto widths = tomoe_widths(trace, o);
  for (int l = 0; l < L; ++l) {
    c.qk_width.push_back(static_cast<int>(std::lround(widths[l].qk.item<double>())));
    c.vo_top_k.push_back(static_cast<int>(std::lround(widths[l].vo.item<double>())));
    c.mlp_width.push_back(static_cast<int>(std::lround(widths[l].mlp.item<double>())));
    const auto& m = trace.mlp[l].expert_masks;  // the converted experts
    const auto& d = drawn[l];                    // the trained experts (Fig. 8: their widths)
    c.mlp_min_width.push_back(d.defined() ? static_cast<int>(d.sum(-1).min().item<double>()) : o.resolved_ffn_hidden());
    std::vector<int> per_expert;
    if (d.defined())
      for (std::int64_t e = 0; e < d.size(0); ++e) per_expert.push_back(static_cast<int>(d[e].sum().item<double>()));
    c.expert_widths.push_back(per_expert);
    c.mlp_union.push_back(m.defined() ? union_of_masks(m.to(torch::kFloat)).mean().item<double>() : 1.0);
    c.vo_union.push_back(vo_used[l].defined() ? vo_used[l].to(torch::kFloat).mean().item<double>() : 1.0);
    const auto jaccard = (m.defined() ? pairwise_jaccard(m) : torch::ones({1, 1}, torch::kDouble)).cpu().contiguous();
    c.expert_similarity.push_back(mean_off_diagonal(jaccard));
    c.expert_jaccard.emplace_back(jaccard.data_ptr<double>(), jaccard.data_ptr<double>() + jaccard.numel());
  }
  const TomoeShape shape = tomoe_shape(o);
  const double total = total_parameters(shape, L);
  const double active = active_parameters(shape, widths).item<double>();
  c.active_ratio = active / total;
  std::int64_t other = 0;  // norms and inference routing, used by every token
  for (const auto& p : model.named_parameters()) {
    const std::string& name = p.key();
    if (is_dense_matrix(name) || name.rfind("hypernet.", 0) == 0 || name.rfind("tok_embeddings.", 0) == 0 ||
        name.rfind("output.", 0) == 0)
      continue;
    if (name.find(".expert_router.proj") != std::string::npos) continue;  // Proj_D^MLP: dropped, masks are constants
    // Proj_D^MHA: only its v/o outputs stay (the q/k rows decided the static mask, now a constant), as TomoeMoe keeps.
    if (name.find(".masker.dec.") != std::string::npos) {
      other += p.value().numel() / p.value().size(0) * o.head_dim();
      continue;
    }
    other += p.value().numel();
  }
  c.params.total = static_cast<std::int64_t>(total) + other;
  c.params.active = static_cast<std::int64_t>(std::llround(active)) + other;
  return c;
}

}  // namespace moxlab
