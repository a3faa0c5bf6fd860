// The model's products y = x W^T (+ b): every torch::nn::Linear of the model, the output head and ToMoE's
// masked FFN go through linear(). A pass may compute them in another form with the same math (the engine's
// packed products: core/engine/packed_linear.h), handed to Transformer::forward in PassOptions::products;
// the forward installs it for its thread with a ProductFormScope, as LibTorch's autocast scopes its own ops,
// so the modules' code reads the same in every form.
#pragma once
#include <functional>

#include <torch/torch.h>

namespace moxlab {

// x [..., K], w [N, K], b [N] or undefined -> [..., N]. Empty: torch::linear.
using ProductForm = std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)>;

// Installs `form` for this thread's products until destroyed (the previous one back then); an empty form
// keeps the current one.
class ProductFormScope {
 public:
  explicit ProductFormScope(const ProductForm& form);
  ~ProductFormScope();
  ProductFormScope(const ProductFormScope&) = delete;
  ProductFormScope& operator=(const ProductFormScope&) = delete;

 private:
  const ProductForm* previous_;
  bool installed_;
};

// Call it qualified (moxlab::linear) on tensors: argument lookup finds at::linear too.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b = {});
torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x);

}  // namespace moxlab
