// Training products on the packed kernels (kernels/fused/packed_matmul.h): y = x W^T + b as an autograd
// function whose three products all run there, the forward on W packed, dX = dY W on W^T packed (both
// packings kept per weight and redone when the weight's version moves: once per optimiser step, however
// many micro-batches and passes use them), dW = dY^T X on the layer input packed as it comes. A weight
// that needs no gradient (ToMoE's frozen dense weights) gets none computed; an input that needs none (the
// token embeddings' first product when they are frozen) neither. Equal to torch::linear to rounding,
// forward and gradients (tests/engine/test_packed_linear.cpp, finite differences included).
#pragma once
#include <memory>

#include "core/model/op_forms.h"

namespace moxlab::engine {

// Whether the packed products take this product: float32 CPU tensors, 2-D weight.
bool packed_product_applies(const torch::Tensor& x, const torch::Tensor& w);

// A product form with its own packings (callers keep it for the run: the packings are reused across
// steps while the weights do not change). Products it does not take run as torch::linear.
decltype(OpForms::linear) packed_products();

// One product with packings made for it alone (tests, benchmarks).
torch::Tensor packed_linear_autograd(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b = {});

}  // namespace moxlab::engine
