#include "core/engine/training_elementwise.h"

#include "kernels/fused/rms_norm.h"
#include "kernels/fused/rope.h"
#include "kernels/fused/swiglu.h"

namespace moxlab::engine {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct RmsNormFunction : torch::autograd::Function<RmsNormFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight, double eps) {
    const auto xc = x.contiguous();
    const auto w = weight.contiguous();
    auto f = rms_norm_training_forward(xc, w, eps);
    ctx->save_for_backward({xc, w, f.inv_rms});
    return f.y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto [dx, dw] = rms_norm_backward(grads[0].contiguous(), saved[0], saved[1], saved[2]);
    return {ctx->needs_input_grad(0) ? dx : torch::Tensor(), ctx->needs_input_grad(1) ? dw : torch::Tensor(), torch::Tensor()};
  }
};

struct SwigluFunction : torch::autograd::Function<SwigluFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& gate, const torch::Tensor& up) {
    const bool fits = swiglu_training_fits(gate, up);
    const auto g = fits ? gate : gate.contiguous(), u = fits ? up : up.contiguous();
    ctx->save_for_backward({g, u});
    return swiglu_training_forward(g, u);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto [dg, du] = swiglu_backward(grads[0].contiguous(), saved[0], saved[1]);
    return {ctx->needs_input_grad(0) ? dg : torch::Tensor(), ctx->needs_input_grad(1) ? du : torch::Tensor()};
  }
};

// The rotation's gradient is the rotation by the opposite angles: cos kept, sin negated.
struct RopeFunction : torch::autograd::Function<RopeFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                               std::int64_t start) {
    ctx->save_for_backward({cos, sin});
    ctx->saved_data["start"] = start;
    return rope_inference(x, cos, sin, start);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto dy = grads[0].stride(-1) == 1 ? grads[0] : grads[0].contiguous();
    return {rope_inference(dy, saved[0], -saved[1], ctx->saved_data["start"].toInt()), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

bool float_cpu(const torch::Tensor& t) { return t.is_cpu() && t.scalar_type() == torch::kFloat; }

}  // namespace

torch::Tensor rms_norm_training(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  if (!float_cpu(x) || !float_cpu(weight) || x.dim() < 1 || weight.dim() != 1 || weight.size(0) != x.size(-1)) return {};
  return RmsNormFunction::apply(x, weight, eps);
}

torch::Tensor swiglu_training(const torch::Tensor& gate, const torch::Tensor& up) {
  if (!float_cpu(gate) || !float_cpu(up) || gate.dim() < 1 || gate.sizes() != up.sizes()) return {};
  return SwigluFunction::apply(gate, up);
}

torch::Tensor rope_training(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, std::int64_t start) {
  {
    const torch::NoGradGuard fits_check;  // rope_fusable is the inference check: it asks for grad mode off
    if (!rope_fusable(x, cos) || !sin.is_contiguous() || sin.sizes() != cos.sizes() || start < 0 || start + x.size(1) > cos.size(0))
      return {};
  }
  return RopeFunction::apply(x, cos, sin, start);
}

}  // namespace moxlab::engine
