#include "core/model/tomoe/tomoe_modules.h"

#include "core/common/error.h"
#include "core/model/kind_modules.h"
#include "core/model/tomoe/tomoe_trace.h"

namespace moxlab {

namespace {
torch::Tensor layer_experts(const ForwardContext& ctx, int layer) {
  require(ctx.tomoe != nullptr && ctx.tomoe->experts.defined(),
          "ToMoE modules need the pass's expert embeddings (run them inside a Transformer)");
  return ctx.tomoe->experts[layer];  // E_l: [N, d_e]
}
}  // namespace

TomoeAttention::TomoeAttention(const ModelOptions& o, int layer) : DenseAttention(o), layer_(layer) {
  HeadDimMaskOptions m;
  m.dim = o.dim;
  m.head_dim = o.head_dim();
  m.embedding = o.tomoe.embedding();
  m.tau = o.tomoe.tau;
  m.offset = o.tomoe.offset;
  masker = register_module("masker", HeadDimMasker(m));
}

torch::Tensor TomoeAttention::forward(const torch::Tensor& x, const Rope& rope, ForwardContext& ctx, const BlockTapNames& taps) {
  if (ctx.gates_off) return DenseAttention::forward(x, rope, ctx, taps);
  const HeadDimMasks m = masks(x, ctx);
  auto heads = head_outputs(x, rope, ctx, taps, nullptr, m.qk);  // [B, T, H, hd], q and k masked by S_0
  return project(heads * m.vo.unsqueeze(-2), ctx, taps);          // S_t on every head of token t
}

HeadDimMasks TomoeAttention::masks(const torch::Tensor& x, ForwardContext& ctx) {
  HeadDimMasks m = masker(x, layer_experts(ctx, layer_));
  ctx.tomoe->attention[layer_] = {m.qk, m.vo};
  return m;
}

TomoeFeedForward::TomoeFeedForward(const ModelOptions& o, int layer) : SwiGLU(o), layer_(layer) {
  MlpExpertOptions m;
  m.dim = o.dim;
  m.d_mid = o.resolved_ffn_hidden();
  m.experts = o.tomoe.experts;
  m.embedding = o.tomoe.embedding();
  m.tau = o.tomoe.tau;
  m.offset = o.tomoe.offset;
  expert_router = register_module("expert_router", MlpExpertRouter(m));
}

torch::Tensor TomoeFeedForward::forward(const torch::Tensor& x, ForwardContext& ctx, const BlockTapNames& taps) {
  if (ctx.gates_off) return SwiGLU::forward(x, ctx, taps);
  const MlpExpertGates g = expert_router(x, layer_experts(ctx, layer_));
  ctx.tomoe->mlp[layer_] = {g.route, g.probs, g.expert_masks};
  ctx.tap(taps.ffn_router_probs, g.probs);  // per-domain expert load and routed-expert text (moxlab route)
  ctx.tap(taps.ffn_router_topk, g.route);
  ctx.tap(taps.ffn_in, x);
  auto y = masked_swiglu(*this, x, g.token_masks);
  ctx.tap(taps.ffn_out, y);
  return y;
}

KindModules tomoe_kind_modules() {
  return {[](const ModelOptions& o, int layer) { return std::make_shared<TomoeAttention>(o, layer); },
          [](const ModelOptions& o, int layer) { return std::make_shared<TomoeFeedForward>(o, layer); }};
}

}  // namespace moxlab
