#include "core/model/ffn.h"

#include "core/common/error.h"
#include "core/model/mohd/mohd_components.h"
#include "core/model/tomoe/tomoe_modules.h"
#include "kernels/fused/swiglu.h"
#include "kernels/sparse/row_parts.h"

namespace moxlab {

ParamCount FeedForward::param_count() const {
  ParamCount c;
  for (const auto& p : parameters()) c.total += p.numel();
  c.active = c.total;
  return c;
}

SwiGLU::SwiGLU(const ModelOptions& o) {
  const int hidden = o.resolved_ffn_hidden();
  w1 = register_module("w1", torch::nn::Linear(torch::nn::LinearOptions(o.dim, hidden).bias(false)));
  w2 = register_module("w2", torch::nn::Linear(torch::nn::LinearOptions(hidden, o.dim).bias(false)));
  w3 = register_module("w3", torch::nn::Linear(torch::nn::LinearOptions(o.dim, hidden).bias(false)));
}

torch::Tensor SwiGLU::forward(const torch::Tensor& x, ForwardContext& ctx, const BlockTapNames& taps) {
  ctx.tap(taps.ffn_in, x);
  if (!torch::GradMode::is_enabled() && !ctx.probes) {
    // Inference: W_gate and W_up as one product, SiLU(g) * u and W_down on each thread's own rows
    // (parallel_row_ranges), as MoHD's sparse FFN runs, so the dense baseline gets the same treatment.
    const auto w13 = stacked_.get({w1->weight, w3->weight}, [&] { return torch::cat({w1->weight, w3->weight}); });
    const auto hidden = w1->weight.size(0);
    const auto x2 = x.reshape({-1, x.size(-1)});
    auto y = torch::empty({x2.size(0), w2->weight.size(0)}, x.options());
    parallel_row_ranges(x2.size(0), 32, [&](std::int64_t a, std::int64_t e) {
      const auto gate_up = torch::mm(x2.narrow(0, a, e - a), w13.t());
      auto rows = y.narrow(0, a, e - a);
      torch::mm_out(rows, swiglu_activation(gate_up.narrow(1, 0, hidden), gate_up.narrow(1, hidden, hidden)), w2->weight.t());
    });
    return y.view(x.sizes());
  }
  auto gate = w1(x);
  auto up = w3(x);
  ctx.tap(taps.ffn_gate, gate);
  ctx.tap(taps.ffn_up, up);
  // Training (autograd) or probe taps, which may hold the gate tensor: not in place.
  auto act = ctx.probes ? torch::silu(gate) * up : swiglu_activation(gate, up);
  ctx.tap(taps.ffn_act, act);
  auto y = w2(act);
  ctx.tap(taps.ffn_out, y);
  return y;
}

torch::Tensor swiglu_activation(torch::Tensor gate, const torch::Tensor& up) {
  if (torch::GradMode::is_enabled()) return torch::silu(gate) * up;
  if (swiglu_fusable(gate, up)) return swiglu_inference(gate, up);
  return torch::silu_(gate).mul_(up);
}

std::shared_ptr<FeedForward> make_ffn(const ModelOptions& o, int layer) {
  if (o.ffn == "dense") return std::make_shared<SwiGLU>(o);
  if (o.ffn == "tomoe") return std::make_shared<TomoeFeedForward>(o, layer);
  if (o.ffn == "mohd") return std::make_shared<MohdFeedForward>(o);
  throw Error("unknown model.ffn kind '" + o.ffn + "'");
}

}  // namespace moxlab
