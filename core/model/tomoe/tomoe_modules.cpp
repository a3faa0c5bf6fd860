#include "core/model/tomoe/tomoe_modules.h"

#include "core/common/error.h"
#include "core/model/kind_modules.h"

namespace moxlab {

namespace {
torch::Tensor layer_experts(const LayerIO& io) {
  require(io.tomoe_embeddings.defined(), "ToMoE modules need the pass's expert embeddings (run them inside a Transformer)");
  return io.tomoe_embeddings[io.layer];  // E_l: [N, d_e]
}
}  // namespace

TomoeAttention::TomoeAttention(const ModelOptions& o) : DenseAttention(o) {
  HeadDimMaskOptions m;
  m.dim = o.dim;
  m.head_dim = o.head_dim();
  m.embedding = o.tomoe.embedding();
  m.tau = o.tomoe.tau;
  m.offset = o.tomoe.offset;
  m.token_noise = o.tomoe.mask_noise == "token";
  m.noise = o.tomoe.mask_noise != "none";
  m.min_qk_pairs = o.tomoe.min_qk_pairs;
  masker = register_module("masker", HeadDimMasker(m));
}

torch::Tensor TomoeAttention::forward(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO& io) {
  if (io.gates_off) return DenseAttention::forward(x, rope, an, taps, io);
  const HeadDimMasks m = masks(x, io);
  const auto qk = m.qk.dim() > 1 ? m.qk.unsqueeze(-2) : m.qk;  // per-token masks: one for all heads of a token
  auto heads = head_outputs(x, rope, an, taps, nullptr, qk);     // [B, T, H, hd], q and k masked by S_0
  return project(heads * m.vo.unsqueeze(-2), an, taps);          // S_t on every head of token t
}

HeadDimMasks TomoeAttention::masks(const torch::Tensor& x, LayerIO& io) {
  HeadDimMasks m = masker(x, layer_experts(io));
  io.tomoe_attention = {m.qk, m.vo};
  return m;
}

TomoeFeedForward::TomoeFeedForward(const ModelOptions& o) : SwiGLU(o) {
  MlpExpertOptions m;
  m.dim = o.dim;
  m.d_mid = o.resolved_ffn_hidden();
  m.experts = o.tomoe.experts;
  m.embedding = o.tomoe.embedding();
  m.tau = o.tomoe.tau;
  m.offset = o.tomoe.offset;
  m.equal_widths = o.tomoe.expert_widths == "widest";
  m.token_noise = o.tomoe.mask_noise == "token";
  m.noise = o.tomoe.mask_noise != "none";
  expert_router = register_module("expert_router", MlpExpertRouter(m));
}

torch::Tensor TomoeFeedForward::forward(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO& io) {
  if (io.gates_off) return SwiGLU::forward(x, an, taps, io);
  const MlpExpertGates g = expert_router(x, layer_experts(io));
  io.tomoe_mlp = {g.route, g.probs, g.expert_masks};
  an.tap(taps.ffn_router_probs, g.probs);  // per-domain expert load and routed-expert text (moxlab route)
  an.tap(taps.ffn_router_topk, g.route);
  an.tap(taps.ffn_in, x);
  auto y = masked_swiglu(*this, x, g.token_masks);
  an.tap(taps.ffn_out, y);
  return y;
}

KindModules tomoe_kind_modules() {
  return {[](const ModelOptions& o, int) { return std::make_shared<TomoeAttention>(o); },
          [](const ModelOptions& o, int) { return std::make_shared<TomoeFeedForward>(o); }};
}

}  // namespace moxlab
