#include "core/model/op_forms.h"

#include "core/model/attention.h"
#include "core/model/rmsnorm.h"

namespace moxlab {

namespace {
thread_local const OpForms* t_forms = nullptr;  // the installed forms, owned by the scope's caller
}  // namespace

OpFormsScope::OpFormsScope(const OpForms& forms) : previous_(t_forms) { t_forms = &forms; }

OpFormsScope::~OpFormsScope() { t_forms = previous_; }

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return t_forms && t_forms->linear ? t_forms->linear(x, w, b) : torch::linear(x, w, b);
}

torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) { return linear(x, layer->weight, layer->bias); }

torch::Tensor attention_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal, double scale) {
  if (t_forms && t_forms->attention)
    if (auto out = t_forms->attention(q, k, v, causal, scale); out.defined()) return out;
  return dot_product_attention_torch(q, k, v, causal, scale);
}

torch::Tensor rms_norm_op(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  if (t_forms && t_forms->rms_norm)
    if (auto out = t_forms->rms_norm(x, weight, eps); out.defined()) return out;
  return rms_norm(x, weight, eps);
}

torch::Tensor swiglu_op(const torch::Tensor& gate, const torch::Tensor& up) {
  if (t_forms && t_forms->swiglu)
    if (auto out = t_forms->swiglu(gate, up); out.defined()) return out;
  return torch::silu(gate) * up;
}

torch::Tensor rope_in_form(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, std::int64_t start) {
  return t_forms && t_forms->rope ? t_forms->rope(x, cos, sin, start) : torch::Tensor();
}

}  // namespace moxlab
