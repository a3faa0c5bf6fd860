#include "core/model/ffn.h"

#include "kernels/fused/packed_matmul.h"
#include "kernels/fused/swiglu.h"
#include "kernels/runtime/row_parallel.h"

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
  if (!ctx.tap_recorder && packed_applies(x)) {
    // Inference: SiLU(x W_gate^T) * (x W_up^T) as one product against W_gate and W_up packed side by side
    // (kernels/fused/packed_matmul.h: the [rows, 2 hidden] gate/up product is never written), then W_down,
    // on each thread's own rows (parallel_row_ranges), as the sparse models' FFNs run.
    const auto hidden = w1->weight.size(0);
    const auto gate_up = packed_weight(stacked_.get({w1->weight, w3->weight}, [&] { return pack_swiglu_weight(w1->weight, w3->weight); }),
                                       hidden, true);
    const auto down = packed_weight(stacked_.get({w2->weight}, [&] { return pack_weight(w2->weight); }), w2->weight.size(0));
    const auto x2 = x.reshape({-1, x.size(-1)}).contiguous();
    auto y = torch::empty({x2.size(0), down.n}, x.options());
    if (x2.size(0) <= kRowGrain) {  // a decode step: each product split by the weight's panels instead
      auto act = torch::empty({x2.size(0), hidden}, x.options());
      parallel_packed_matmul(row_map(x2), x2.size(0), gate_up, row_map(act));
      parallel_packed_matmul(row_map(act), x2.size(0), down, row_map(y));
    } else {
      parallel_row_ranges(x2.size(0), kRowGrain, [&](std::int64_t a, std::int64_t e) {
        auto act = torch::empty({e - a, hidden}, x.options());
        packed_matmul(row_map(x2.narrow(0, a, e - a)), e - a, gate_up, row_map(act));
        packed_matmul(row_map(act), e - a, down, row_map(y.narrow(0, a, e - a)));
      });
    }
    auto shape = x.sizes().vec();
    shape.back() = down.n;
    return y.view(shape);
  }
  auto gate = w1(x);
  auto up = w3(x);
  ctx.tap(taps.ffn_gate, gate);
  ctx.tap(taps.ffn_up, up);
  // Training (autograd) or recorded taps, which may hold the gate tensor: not in place.
  auto act = ctx.tap_recorder ? torch::silu(gate) * up : swiglu_activation(gate, up);
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

}  // namespace moxlab
