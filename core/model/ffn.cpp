#include "core/model/ffn.h"

#include "core/model/op_forms.h"

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

torch::Tensor SwiGLU::forward(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO&) {
  an.tap(taps.ffn_in, x);
  auto gate = linear(w1, x);
  auto up = linear(w3, x);
  an.tap(taps.ffn_gate, gate);
  an.tap(taps.ffn_up, up);
  auto act = swiglu_op(gate, up);
  an.tap(taps.ffn_act, act);
  auto y = linear(w2, act);
  an.tap(taps.ffn_out, y);
  return y;
}

}  // namespace moxlab
