#include "core/model/tomoe/mlp_experts.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/op_forms.h"
#include "core/model/tomoe/gumbel_gates.h"

namespace moxlab {

MlpExpertRouterImpl::MlpExpertRouterImpl(const MlpExpertOptions& o) : o_(o) {
  require(o.dim > 0 && o.d_mid > 0 && o.embedding > 0, "ToMoE MLP experts: dim, d_mid and embedding must be positive");
  require(o.experts >= 1, "ToMoE MLP experts: need at least one expert");
  require(o.tau > 0, "ToMoE MLP experts: temperature must be > 0");
  router = register_module("router", torch::nn::Linear(torch::nn::LinearOptions(o.dim, o.experts).bias(false)));
  proj_norm = register_module("proj_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.embedding})));
  proj = register_module("proj", torch::nn::Linear(o.embedding, o.d_mid));
  frozen_masks_ = register_buffer("frozen_masks", torch::zeros({o.experts, o.d_mid}));
  frozen_ = register_buffer("frozen", torch::zeros({}, torch::kBool));
}

torch::Tensor MlpExpertRouterImpl::mask_logits(const torch::Tensor& experts) {
  return proj(torch::gelu(proj_norm(experts))).to(torch::kFloat);  // Eq. 11
}

bool MlpExpertRouterImpl::frozen() const { return frozen_.item<bool>(); }

torch::Tensor MlpExpertRouterImpl::freeze_masks(const torch::Tensor& experts, bool noisy) {
  torch::NoGradGuard no_grad;
  const auto logits = mask_logits(experts);
  const auto noise = gate_noise(logits, noisy);
  const auto drawn = st_gumbel_sigmoid(logits, noise, o_.tau, o_.offset);
  frozen_masks_.copy_(o_.equal_widths ? equalise_expert_widths(logits + noise + o_.offset, drawn) : drawn);
  frozen_.fill_(true);
  return drawn;
}

torch::Tensor equalise_expert_widths(const torch::Tensor& scores, const torch::Tensor& masks) {
  require(scores.dim() == 2 && scores.sizes() == masks.sizes(), "equal expert widths: scores and masks must be [N, d_mid]");
  const auto widest = masks.sum(-1).max().item<double>();
  const auto w = static_cast<std::int64_t>(std::lround(widest));
  // A stable descending sort, so equal scores go to the lower channel index.
  const auto order = std::get<1>(scores.sort(/*stable=*/true, /*dim=*/-1, /*descending=*/true)).narrow(-1, 0, w);
  return torch::zeros_like(masks).scatter(-1, order, 1.0);
}

MlpExpertGates MlpExpertRouterImpl::forward(const torch::Tensor& x, const torch::Tensor& experts) {
  require(experts.dim() == 2 && experts.size(0) == o_.experts && experts.size(1) == o_.embedding,
          "ToMoE MLP experts: expert embeddings must be [experts, embedding]");
  MlpExpertGates g;
  const bool noisy = is_training() && o_.noise;
  // Routing in float32, as the official code does.
  auto logits = router(x).to(torch::kFloat);
  g.probs = torch::softmax(logits, -1);
  g.route = st_gumbel_softmax(logits, gate_noise(logits, noisy), o_.tau);  // Eq. 3, 14
  if (frozen()) {
    g.expert_masks = frozen_masks_;
  } else {
    const auto logits_e = mask_logits(experts);
    g.expert_masks = st_gumbel_sigmoid(logits_e, gate_noise(logits_e, noisy), o_.tau, o_.offset);
  }
  if (!frozen() && is_training() && o_.token_noise) {
    // Eq. 3 per token, as the official code draws it: each token decodes its routed expert's embedding
    // (G E, straight-through) and samples the mask with its own noise. expert_masks above stay a separate
    // per-expert draw for R_P and R_U, as the official regularisers take their own sample.
    const auto token_logits = mask_logits(torch::matmul(g.route.to(experts.dtype()), experts));
    g.token_masks = st_gumbel_sigmoid(token_logits, gate_noise(token_logits, true), o_.tau, o_.offset).to(x.dtype());
  } else {
    g.token_masks = torch::matmul(g.route, g.expert_masks).to(x.dtype());  // G s_e: [..., d_mid]
  }
  return g;
}

torch::Tensor masked_swiglu(const SwiGLU& ffn, const torch::Tensor& x, const torch::Tensor& mask) {
  auto gate = torch::silu(linear(ffn.w1, x)) * mask;
  auto up = linear(ffn.w3, x) * mask;
  return linear(ffn.w2, gate * up);
}

ExpertWeights extract_expert(const SwiGLU& ffn, const torch::Tensor& keep) {
  require(keep.dim() == 1 && keep.size(0) == ffn.w1->weight.size(0), "extract expert: keep must be [d_mid]");
  auto idx = keep.detach().nonzero().squeeze(-1);
  ExpertWeights e;
  e.w_gate = ffn.w1->weight.detach().index_select(0, idx);
  e.w_up = ffn.w3->weight.detach().index_select(0, idx);
  e.w_down = ffn.w2->weight.detach().index_select(1, idx);
  return e;
}

torch::Tensor expert_forward(const ExpertWeights& e, const torch::Tensor& x) {
  auto act = swiglu_op(torch::matmul(x, e.w_gate.t()), torch::matmul(x, e.w_up.t()));
  return torch::matmul(act, e.w_down.t());
}

}  // namespace moxlab
