#include "core/engine/packed_linear.h"

#include <mutex>
#include <unordered_map>

#include "kernels/fused/packed_matmul.h"

namespace moxlab::engine {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A weight's two packings: W for the forward, W^T for dX (made on first need).
struct WeightPacks {
  torch::Tensor weight;  // held, so its identity cannot pass to another tensor
  std::int64_t version = -1;
  torch::Tensor packed, packed_t;
};

WeightPacks pack(const torch::Tensor& w, bool need_t, WeightPacks p = {}) {
  if (!p.packed.defined()) p.packed = pack_weight(w.detach().contiguous());
  if (need_t && !p.packed_t.defined()) p.packed_t = pack_transposed(w.detach());
  return p;
}

// The packings of the weights a run trains (leaf tensors), redone when a weight's version has moved: an
// optimiser step changes every trained weight in place once, so each is packed once per step.
class PackCache {
 public:
  WeightPacks get(const torch::Tensor& w, bool need_t) {
    if (!w.is_leaf()) return pack(w, need_t);  // a tensor computed in this pass: packed for this product
    const std::lock_guard<std::mutex> lock(mutex_);
    WeightPacks& p = packs_[w.unsafeGetTensorImpl()];
    const auto version = static_cast<std::int64_t>(w._version());
    if (!p.weight.is_same(w) || p.version != version) p = WeightPacks{w, version, {}, {}};
    p = pack(w, need_t, std::move(p));
    return p;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const c10::TensorImpl*, WeightPacks> packs_;
};

// x [M, K] (contiguous rows) through a packing of n output columns -> [M, n] (+ bias).
torch::Tensor product(const torch::Tensor& x, const torch::Tensor& packed, std::int64_t n, const torch::Tensor& bias = {}) {
  auto y = torch::empty({x.size(0), n}, x.options());
  ProductOptions opt;
  if (bias.defined()) opt.bias = bias.data_ptr<float>();
  parallel_packed_matmul(row_map(x), x.size(0), packed_weight(packed, n), row_map(y), opt);
  return y;
}

// dW = dY^T X [n, k], a product over the rows M: one operand's columns become the kernel's rows (a
// transposed copy), the other's are packed as a weight's rows (pack_transposed, a streaming pass). The
// transposed copy walks memory across rows and is the slower of the two, so it takes the narrower of dY
// and X (the output head's dY is vocab wide: transposing it took as long as its products); taking X's
// side yields dW^T, transposed back (n x k, no wider than either operand).
torch::Tensor weight_gradient(const torch::Tensor& dy, const torch::Tensor& x) {
  const auto n = dy.size(1), k = x.size(1);
  if (n <= k) return product(dy.t().contiguous(), pack_transposed(x), k);
  return product(x.t().contiguous(), pack_transposed(dy), n).t().contiguous();
}

struct PackedLinearFunction : torch::autograd::Function<PackedLinearFunction> {
  // packs: W packed, and W^T packed when x needs a gradient. (Optional and non-tensor arguments are not
  // autograd inputs, so the bias is one only when given, the packings never.)
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const c10::optional<torch::Tensor>& b, const WeightPacks& packs) {
    const auto n = w.size(0), k = w.size(1);
    const auto x2 = x.reshape({-1, k}).contiguous();
    auto y = product(x2, packs.packed, n, b ? b->contiguous() : torch::Tensor());
    ctx->save_for_backward({w.requires_grad() ? x2 : torch::Tensor(), packs.packed_t});
    ctx->saved_data["x_shape"] = x.sizes().vec();
    ctx->saved_data["has_bias"] = b.has_value();
    auto shape = x.sizes().vec();
    shape.back() = n;
    return y.view(shape);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x2 = saved[0];
    const auto& packed_t = saved[1];
    const auto x_shape = ctx->saved_data["x_shape"].toIntVector();
    const auto k = x_shape.back(), n = grads[0].size(-1);
    const auto dy = grads[0].reshape({-1, n}).contiguous();
    torch::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) dx = product(dy, packed_t, k).view(x_shape);  // dX = dY W
    if (ctx->needs_input_grad(1)) dw = weight_gradient(dy, x2);
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)) db = dy.sum(0);
    return {dx, dw, db, torch::Tensor()};
  }
};

torch::Tensor packed_linear(PackCache& cache, const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  if (!packed_product_applies(x, w)) return torch::linear(x, w, b);
  TORCH_CHECK(x.size(-1) == w.size(1) && (!b.defined() || b.numel() == w.size(0)), "linear: input [..., ", x.size(-1),
              "] against weight [", w.size(0), ", ", w.size(1), "]");
  const bool grad = torch::GradMode::is_enabled();
  const WeightPacks p = cache.get(w, grad && x.requires_grad());
  return PackedLinearFunction::apply(x, w, b.defined() ? c10::optional<torch::Tensor>(b) : c10::nullopt, p);
}

}  // namespace

bool packed_product_applies(const torch::Tensor& x, const torch::Tensor& w) {
  return x.is_cpu() && w.is_cpu() && x.scalar_type() == torch::kFloat && w.scalar_type() == torch::kFloat && w.dim() == 2 &&
         x.dim() >= 1 && x.numel() > 0;
}

decltype(OpForms::linear) packed_products() {
  auto cache = std::make_shared<PackCache>();
  return [cache](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) { return packed_linear(*cache, x, w, b); };
}

torch::Tensor packed_linear_autograd(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  PackCache cache;
  return packed_linear(cache, x, w, b);
}

}  // namespace moxlab::engine
