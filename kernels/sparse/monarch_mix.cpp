#include "kernels/sparse/monarch_mix.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "kernels/fused/float_vectors.h"
#include "kernels/runtime/cpu_features.h"

namespace moxlab {

torch::Tensor monarch_mix_weights(const torch::Tensor& b2) {
  TORCH_CHECK(b2.dim() == 3 && b2.size(1) == b2.size(2) && b2.scalar_type() == torch::kFloat, "Monarch column mix: b2 must be [r, groups, groups] float32");
  return b2.permute({1, 2, 0}).contiguous();  // [k, j, c]: the weights of output group k, input group j along c
}

namespace {

using simd::f8;
using simd::f16;
using simd::kLanes;
using simd::loadv;
using simd::storev;

// Output groups k0 .. k0 + K - 1 of the row, C vectors of columns from c0: K x C vector accumulators in
// registers (K independent chains hide the multiply-add latency); each input's C vectors are loaded and
// scaled once and reused by all K output groups. F = float (one column) serves the tail.
template <class F, int K, int C>
MOXLAB_INLINE void mix_tile(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups,
                            std::int64_t r, std::int64_t k0, std::int64_t c0) {
  constexpr int L = sizeof(F) / sizeof(float);
  F acc[K][C];
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < C; ++c) acc[k][c] = F{};
  for (std::int64_t i = 0; i < n_inputs; ++i) {
    F x[C];
    for (int c = 0; c < C; ++c) x[c] = loadv<F>(inputs[i].x + c0 + c * L) * inputs[i].scale;
    const float* w = bt + (k0 * groups + inputs[i].group) * r + c0;
    for (int k = 0; k < K; ++k)
      for (int c = 0; c < C; ++c) acc[k][c] += loadv<F>(w + k * groups * r + c * L) * x[c];
  }
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < C; ++c) storev(y + (k0 + k) * r + c0 + c * L, acc[k][c]);
}

// All output groups, four at a time, for C vectors of columns from c0.
template <class F, int C>
MOXLAB_INLINE void mix_columns(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups,
                               std::int64_t r, std::int64_t c0) {
  std::int64_t k0 = 0;
  for (; k0 + 4 <= groups; k0 += 4) mix_tile<F, 4, C>(inputs, n_inputs, bt, y, groups, r, k0, c0);
  for (; k0 < groups; ++k0) mix_tile<F, 1, C>(inputs, n_inputs, bt, y, groups, r, k0, c0);
}

// The row in vectors of F, up to three at a time (12 accumulators), the last columns one by one.
template <class F>
MOXLAB_INLINE void mix_row(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups, std::int64_t r) {
  constexpr int L = kLanes<F>;
  std::int64_t c0 = 0;
  for (; c0 + 3 * L <= r; c0 += 3 * L) mix_columns<F, 3>(inputs, n_inputs, bt, y, groups, r, c0);
  for (; c0 + L <= r; c0 += L) mix_columns<F, 1>(inputs, n_inputs, bt, y, groups, r, c0);
  for (; c0 < r; ++c0) mix_columns<float, 1>(inputs, n_inputs, bt, y, groups, r, c0);
}

using MixRowFn = void (*)(const MixInput*, std::int64_t, const float*, float*, std::int64_t, std::int64_t);
void mix_row_portable(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups, std::int64_t r) {
  mix_row<f8>(inputs, n_inputs, bt, y, groups, r);
}
MOXLAB_TARGET_AVX2 void mix_row_avx2(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups, std::int64_t r) {
  mix_row<f8>(inputs, n_inputs, bt, y, groups, r);
}

MOXLAB_TARGET_AVX512 void mix_row_avx512(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups, std::int64_t r) {
  mix_row<f16>(inputs, n_inputs, bt, y, groups, r);
}

// Rows [0, n) of dy and x into acc [groups (k), groups (j), r (c)]: per row and (k, j) pair, r multiply-adds
// along contiguous columns.
template <class F>
MOXLAB_INLINE void weight_grad_rows(const float* dy, const float* x, std::int64_t n, std::int64_t groups, std::int64_t r, float* acc) {
  constexpr int L = kLanes<F>;
  const std::int64_t width = groups * r;
  for (std::int64_t m = 0; m < n; ++m, dy += width, x += width)
    for (std::int64_t k = 0; k < groups; ++k)
      for (std::int64_t j = 0; j < groups; ++j) {
        float* a = acc + (k * groups + j) * r;
        const float *d = dy + k * r, *v = x + j * r;
        std::int64_t c = 0;
        for (; c + L <= r; c += L) storev(a + c, loadv<F>(a + c) + loadv<F>(d + c) * loadv<F>(v + c));
        for (; c < r; ++c) a[c] += d[c] * v[c];
      }
}

using WeightGradFn = void (*)(const float*, const float*, std::int64_t, std::int64_t, std::int64_t, float*);
void weight_grad_portable(const float* dy, const float* x, std::int64_t n, std::int64_t groups, std::int64_t r, float* acc) {
  weight_grad_rows<f8>(dy, x, n, groups, r, acc);
}
MOXLAB_TARGET_AVX2 void weight_grad_avx2(const float* dy, const float* x, std::int64_t n, std::int64_t groups, std::int64_t r, float* acc) {
  weight_grad_rows<f8>(dy, x, n, groups, r, acc);
}
MOXLAB_TARGET_AVX512 void weight_grad_avx512(const float* dy, const float* x, std::int64_t n, std::int64_t groups, std::int64_t r, float* acc) {
  weight_grad_rows<f16>(dy, x, n, groups, r, acc);
}

}  // namespace

torch::Tensor monarch_mix_weight_grad(const torch::Tensor& dy, const torch::Tensor& x, std::int64_t groups) {
  TORCH_CHECK(dy.dim() == 2 && dy.sizes() == x.sizes() && groups > 0 && x.size(1) % groups == 0 && dy.scalar_type() == torch::kFloat &&
                  x.scalar_type() == torch::kFloat,
              "Monarch column mix weight gradient: dy and x must be float32 [n, groups * r] alike");
  const std::int64_t n = x.size(0), r = x.size(1) / groups, size = groups * groups * r;
  const auto dyc = dy.contiguous(), xc = x.contiguous();
  const auto fn = isa_variant<WeightGradFn>(weight_grad_portable, weight_grad_avx2, r >= 16 ? weight_grad_avx512 : weight_grad_avx2);
  const std::int64_t parts = std::max<std::int64_t>(1, std::min<std::int64_t>(at::get_num_threads(), n / 64));
  auto acc = torch::zeros({parts, size}, x.options());
  at::parallel_for(0, parts, 1, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p) {
      const std::int64_t m0 = n * p / parts, m1 = n * (p + 1) / parts;
      fn(dyc.data_ptr<float>() + m0 * groups * r, xc.data_ptr<float>() + m0 * groups * r, m1 - m0, groups, r, acc[p].data_ptr<float>());
    }
  });
  return acc.sum(0).view({groups, groups, r}).permute({2, 0, 1}).contiguous();  // [k, j, c] -> [c, k, j]
}

void monarch_mix_row(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups, std::int64_t r) {
  isa_variant<MixRowFn>(mix_row_portable, mix_row_avx2, r >= 16 ? mix_row_avx512 : mix_row_avx2)(inputs, n_inputs, bt, y, groups, r);
}

torch::Tensor monarch_column_mix(const torch::Tensor& x, const torch::Tensor& b2) {
  const std::int64_t r = b2.size(0), groups = b2.size(1), n = x.size(0);
  TORCH_CHECK(x.dim() == 2 && x.size(1) == groups * r && b2.size(2) == groups, "Monarch column mix: shape mismatch");
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "Monarch column mix: float32 only");
  const auto xc = x.contiguous();
  const auto bt = monarch_mix_weights(b2);
  auto y = torch::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  const float* bp = bt.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const std::int64_t width = groups * r;
  at::parallel_for(0, n, 16, [&](std::int64_t begin, std::int64_t end) {
    std::vector<MixInput> in(static_cast<std::size_t>(groups));
    for (std::int64_t m = begin; m < end; ++m) {
      for (std::int64_t j = 0; j < groups; ++j) in[static_cast<std::size_t>(j)] = {j, xp + m * width + j * r};
      monarch_mix_row(in.data(), groups, bp, yp + m * width, groups, r);
    }
  });
  return y;
}

}  // namespace moxlab
