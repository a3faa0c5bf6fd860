#include "kernels/fused/layer_norm_gelu.h"

#include <cmath>

#include "kernels/fused/float_vectors.h"
#include "kernels/runtime/cpu_features.h"

namespace moxlab {

namespace {

using namespace simd;

// erf(z) = 1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) e^(-z^2), t = 1 / (1 + p z), for z >= 0 (A&S 7.1.26);
// odd in z.
template <class F>
MOXLAB_INLINE F erfv(F z) {
  const F az = z < F{} ? -z : z;
  const F t = splatv<F>(1.0f) / (splatv<F>(1.0f) + splatv<F>(0.3275911f) * az);
  F p = splatv<F>(1.061405429f);
  p = p * t + splatv<F>(-1.453152027f);
  p = p * t + splatv<F>(1.421413741f);
  p = p * t + splatv<F>(-0.284496736f);
  p = p * t + splatv<F>(0.254829592f);
  const F e = splatv<F>(1.0f) - p * t * expv(-az * az);
  return z < F{} ? -e : e;
}

constexpr float kInvSqrt2 = 0.70710678118654752f;

// One row on vectors of F (8 or 16 floats), the last n % lanes values one at a time.
template <class F>
MOXLAB_INLINE void layer_norm_gelu_row_of(float* x, std::int64_t n, const float* w, const float* b, float eps) {
  constexpr int W = kLanes<F>;
  const std::int64_t full = n / W * W;
  F sum{};
  for (std::int64_t i = 0; i < full; i += W) sum += loadv<F>(x + i);
  float total = lane_sum(sum);
  for (std::int64_t i = full; i < n; ++i) total += x[i];
  const float mean = total / static_cast<float>(n);
  F sq{};
  for (std::int64_t i = 0; i < full; i += W) {
    const F d = loadv<F>(x + i) - splatv<F>(mean);
    sq += d * d;
  }
  float var = lane_sum(sq);
  for (std::int64_t i = full; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / std::sqrt(var / static_cast<float>(n) + eps);
  for (std::int64_t i = 0; i < full; i += W) {
    const F y = (loadv<F>(x + i) - splatv<F>(mean)) * splatv<F>(inv) * loadv<F>(w + i) + loadv<F>(b + i);
    storev(x + i, splatv<F>(0.5f) * y * (splatv<F>(1.0f) + erfv(y * splatv<F>(kInvSqrt2))));
  }
  for (std::int64_t i = full; i < n; ++i) {
    const float y = (x[i] - mean) * inv * w[i] + b[i];
    x[i] = 0.5f * y * (1.0f + std::erf(y * kInvSqrt2));
  }
}

using RowFn = void (*)(float*, std::int64_t, const float*, const float*, float);
void layer_norm_gelu_row_portable(float* x, std::int64_t n, const float* w, const float* b, float eps) {
  layer_norm_gelu_row_of<f8>(x, n, w, b, eps);
}
MOXLAB_TARGET_AVX2 void layer_norm_gelu_row_avx2(float* x, std::int64_t n, const float* w, const float* b, float eps) {
  layer_norm_gelu_row_of<f8>(x, n, w, b, eps);
}
// Sixteen-float vectors where the CPU runs 512-bit instructions at full width (ToMoE's d_e = 128: 8 vectors).
MOXLAB_TARGET_AVX512
void layer_norm_gelu_row_avx512(float* x, std::int64_t n, const float* w, const float* b, float eps) {
  layer_norm_gelu_row_of<f16>(x, n, w, b, eps);
}

}  // namespace

void layer_norm_gelu_rows(float* x, std::int64_t rows, std::int64_t stride, std::int64_t n, const float* w, const float* b, float eps) {
  const RowFn row =
      isa_variant<RowFn>(layer_norm_gelu_row_portable, layer_norm_gelu_row_avx2, n >= 16 ? layer_norm_gelu_row_avx512 : layer_norm_gelu_row_avx2);
  for (std::int64_t r = 0; r < rows; ++r) row(x + r * stride, n, w, b, eps);
}

}  // namespace moxlab
