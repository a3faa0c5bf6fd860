#include "kernels/fused/layer_norm_gelu.h"

#include <cmath>

#include "kernels/fused/vec8.h"

namespace moxlab {

namespace {

using namespace vec8;

// erf(z) = 1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) e^(-z^2), t = 1 / (1 + p z), for z >= 0 (A&S 7.1.26);
// odd in z.
MOXLAB_INLINE f8 erf8(f8 z) {
  const f8 az = z < f8{} ? -z : z;
  const f8 t = splat(1.0f) / (splat(1.0f) + splat(0.3275911f) * az);
  f8 p = splat(1.061405429f);
  p = p * t + splat(-1.453152027f);
  p = p * t + splat(1.421413741f);
  p = p * t + splat(-0.284496736f);
  p = p * t + splat(0.254829592f);
  const f8 e = splat(1.0f) - p * t * exp8(-az * az);
  return z < f8{} ? -e : e;
}

constexpr float kInvSqrt2 = 0.70710678118654752f;

__attribute__((target_clones("arch=x86-64-v3", "default")))
void layer_norm_gelu_row(float* x, std::int64_t n, const float* w, const float* b, float eps) {
  const std::int64_t full = n / 8 * 8;
  f8 sum{};
  for (std::int64_t i = 0; i < full; i += 8) sum += load8(x + i);
  float total = 0;
  for (int l = 0; l < 8; ++l) total += sum[l];
  for (std::int64_t i = full; i < n; ++i) total += x[i];
  const float mean = total / static_cast<float>(n);
  f8 sq{};
  for (std::int64_t i = 0; i < full; i += 8) {
    const f8 d = load8(x + i) - mean;
    sq += d * d;
  }
  float var = 0;
  for (int l = 0; l < 8; ++l) var += sq[l];
  for (std::int64_t i = full; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / std::sqrt(var / static_cast<float>(n) + eps);
  for (std::int64_t i = 0; i < full; i += 8) {
    const f8 y = (load8(x + i) - mean) * inv * load8(w + i) + load8(b + i);
    store8(x + i, splat(0.5f) * y * (splat(1.0f) + erf8(y * kInvSqrt2)));
  }
  for (std::int64_t i = full; i < n; ++i) {
    const float y = (x[i] - mean) * inv * w[i] + b[i];
    x[i] = 0.5f * y * (1.0f + std::erf(y * kInvSqrt2));
  }
}

}  // namespace

void layer_norm_gelu_rows(float* x, std::int64_t rows, std::int64_t stride, std::int64_t n, const float* w, const float* b, float eps) {
  for (std::int64_t r = 0; r < rows; ++r) layer_norm_gelu_row(x + r * stride, n, w, b, eps);
}

}  // namespace moxlab
