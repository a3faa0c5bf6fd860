#include "core/model/linear.h"

namespace moxlab {

namespace {
thread_local const ProductForm* t_form = nullptr;  // the installed form, owned by its scope's caller
}  // namespace

ProductFormScope::ProductFormScope(const ProductForm& form) : previous_(t_form), installed_(static_cast<bool>(form)) {
  if (installed_) t_form = &form;
}

ProductFormScope::~ProductFormScope() {
  if (installed_) t_form = previous_;
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return t_form ? (*t_form)(x, w, b) : torch::linear(x, w, b);
}

torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) { return linear(x, layer->weight, layer->bias); }

}  // namespace moxlab
