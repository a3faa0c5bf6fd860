#include "core/model/tomoe/head_dim_masks.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/tomoe/gumbel_gates.h"

namespace moxlab {

HeadDimMaskerImpl::HeadDimMaskerImpl(const HeadDimMaskOptions& o) : o_(o) {
  require(o.dim > 0 && o.embedding > 0, "ToMoE head-dim masks: dim and embedding must be positive");
  require(o.head_dim >= 2 && o.head_dim % 2 == 0, "ToMoE head-dim masks: head_dim must be even (RoPE pairs)");
  require(o.tau > 0, "ToMoE head-dim masks: temperature must be > 0");
  proj_e = register_module("proj_e", torch::nn::Linear(o.dim, o.embedding));
  dec_norm = register_module("dec_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.embedding})));
  dec = register_module("dec", torch::nn::Linear(o.embedding, o.head_dim + o.head_dim / 2));
  top_k_ = register_buffer("top_k", torch::zeros({}, torch::kLong));
  frozen_qk_ = register_buffer("frozen_qk", torch::zeros({o.head_dim / 2}));
  qk_frozen_ = register_buffer("qk_frozen", torch::zeros({}, torch::kBool));
}

// One straight-through gate per RoPE pair: the last h/2 decoder outputs of the mean embedding alone.
torch::Tensor HeadDimMaskerImpl::qk_pair_gates(const torch::Tensor& experts, bool noisy) {
  auto logits = decode(experts.mean(0)).narrow(-1, o_.head_dim, o_.head_dim / 2);
  return st_gumbel_sigmoid(logits, gate_noise(logits, noisy), o_.tau, o_.offset);
}

void HeadDimMaskerImpl::freeze_qk(const torch::Tensor& experts, bool noisy) {
  torch::NoGradGuard no_grad;
  auto gates = qk_pair_gates(experts, noisy);
  const auto kept = gates.sum().item<double>();
  if (kept < o_.min_qk_pairs) {  // the official code keeps the highest-scoring pair(s) rather than none
    const auto logits = decode(experts.mean(0)).narrow(-1, o_.head_dim, o_.head_dim / 2);
    const auto order = std::get<1>(logits.topk(std::min<int>(o_.min_qk_pairs, o_.head_dim / 2)));
    gates.index_fill_(0, order, 1.0);
  }
  frozen_qk_.copy_(gates);
  qk_frozen_.fill_(true);
}

torch::Tensor HeadDimMaskerImpl::decode(const torch::Tensor& e) {
  return dec(torch::gelu(dec_norm(e))).to(torch::kFloat);
}

void HeadDimMaskerImpl::set_inference_top_k(int k) {
  require(k >= 1 && k <= o_.head_dim, "ToMoE head-dim masks: top-K must be in [1, head_dim], got " + std::to_string(k));
  top_k_.fill_(k);
}

std::optional<int> HeadDimMaskerImpl::inference_top_k() const {
  const auto k = top_k_.item<std::int64_t>();
  if (k == 0) return std::nullopt;
  return static_cast<int>(k);
}

HeadDimMasks HeadDimMaskerImpl::forward(const torch::Tensor& x, const torch::Tensor& experts) {
  require(experts.dim() == 2 && experts.size(1) == o_.embedding, "ToMoE head-dim masks: experts must be [N, embedding]");
  const int h = o_.head_dim;
  auto mean_e = experts.mean(0);  // (1/N) 1^T E
  HeadDimMasks m;
  // Static q/k mask, one gate per RoPE pair (a constant once frozen). Training with token noise (the
  // official code): the same logits for every token, each token's own noise, so the mask is [..., head_dim].
  if (qk_frozen_.item<bool>()) {
    m.qk = rope_pair_mask(frozen_qk_);
  } else if (is_training() && o_.token_noise) {
    auto shape = x.sizes().vec();
    shape.back() = h / 2;
    const auto logits = decode(mean_e).narrow(-1, h, h / 2).expand(shape);
    m.qk = rope_pair_mask(st_gumbel_sigmoid(logits, gate_noise(logits, true), o_.tau, o_.offset));
  } else {
    m.qk = rope_pair_mask(qk_pair_gates(experts, is_training() && o_.noise));
  }
  // Dynamic v/o mask (Eq. 5): the first h decoder outputs of Proj_E(x_t) + mean embedding.
  auto vo_logits = decode(proj_e(x) + mean_e).narrow(-1, 0, h);
  if (const auto k = inference_top_k(); !is_training() && k) {
    m.vo = top_k_mask(vo_logits, *k);
  } else {
    m.vo = st_gumbel_sigmoid(vo_logits, gate_noise(vo_logits, is_training() && o_.noise), o_.tau, o_.offset);
  }
  m.vo = m.vo.to(x.dtype());
  m.qk = m.qk.to(x.dtype());
  return m;
}

torch::Tensor rope_pair_mask(const torch::Tensor& per_pair) { return per_pair.repeat_interleave(2, -1); }

int average_kept(const torch::Tensor& masks) {
  require(masks.dim() >= 1 && masks.numel() > 0, "average kept count: empty masks");
  const double mean = masks.detach().to(torch::kDouble).sum(-1).mean().item<double>();
  return static_cast<int>(std::lround(mean));
}

torch::Tensor top_k_mask(const torch::Tensor& logits, int k) {
  require(k >= 0 && k <= logits.size(-1), "top-K mask: k out of range");
  auto idx = std::get<1>(logits.detach().topk(k, -1));
  return torch::zeros_like(logits).scatter(-1, idx, 1.0);
}

}  // namespace moxlab
