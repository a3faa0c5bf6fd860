#include "kernels/fused/cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/fused/float_vectors.h"
#include "kernels/runtime/row_parallel.h"

namespace moxlab {

namespace {

using simd::f8;
using simd::f16;
using simd::kLanes;
using simd::loadv;
using simd::splatv;
using simd::storev;

// Row x's probabilities into p; returns log sum_j e^{x_j}.
template <class F>
MOXLAB_INLINE float row_forward(const float* x, std::int64_t v, float* p) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < v; ++j) m = std::max(m, x[j]);
  const float total = simd::exp_shifted_row<F>(x, p, v, m, 1.0f);
  simd::normalise_row<F>(p, v, total);
  return std::log(total) + m;
}

template <class F>
MOXLAB_INLINE void forward_rows(const float* logits, const std::int64_t* targets, std::int64_t r0, std::int64_t r1, std::int64_t v,
                                float* probs, float* loss) {
  for (std::int64_t r = r0; r < r1; ++r) {
    const float* x = logits + r * v;
    const std::int64_t t = targets[r];
    const float target_logit = t >= 0 ? x[t] : 0.0f;  // read before probs (which may be x) is written
    const float lse = row_forward<F>(x, v, probs + r * v);
    loss[r] = t >= 0 ? lse - target_logit : 0.0f;
  }
}

template <class F>
MOXLAB_INLINE void grad_rows(float* probs, const std::int64_t* targets, std::int64_t r0, std::int64_t r1, std::int64_t v, float scale) {
  constexpr int W = kLanes<F>;
  const F s = splatv<F>(scale);
  for (std::int64_t r = r0; r < r1; ++r) {
    float* p = probs + r * v;
    const std::int64_t t = targets[r];
    if (t < 0) {
      std::fill(p, p + v, 0.0f);
      continue;
    }
    p[t] -= 1.0f;
    std::int64_t j = 0;
    for (; j + W <= v; j += W) storev(p + j, loadv<F>(p + j) * s);
    for (; j < v; ++j) p[j] *= scale;
  }
}

using ForwardFn = void (*)(const float*, const std::int64_t*, std::int64_t, std::int64_t, std::int64_t, float*, float*);
using GradFn = void (*)(float*, const std::int64_t*, std::int64_t, std::int64_t, std::int64_t, float);
void forward_portable(const float* l, const std::int64_t* t, std::int64_t a, std::int64_t e, std::int64_t v, float* p, float* loss) {
  forward_rows<f8>(l, t, a, e, v, p, loss);
}
MOXLAB_TARGET_AVX2 void forward_avx2(const float* l, const std::int64_t* t, std::int64_t a, std::int64_t e, std::int64_t v, float* p,
                                     float* loss) {
  forward_rows<f8>(l, t, a, e, v, p, loss);
}
MOXLAB_TARGET_AVX512 void forward_avx512(const float* l, const std::int64_t* t, std::int64_t a, std::int64_t e, std::int64_t v, float* p,
                                         float* loss) {
  forward_rows<f16>(l, t, a, e, v, p, loss);
}
void grad_portable(float* p, const std::int64_t* t, std::int64_t a, std::int64_t e, std::int64_t v, float s) { grad_rows<f8>(p, t, a, e, v, s); }
MOXLAB_TARGET_AVX2 void grad_avx2(float* p, const std::int64_t* t, std::int64_t a, std::int64_t e, std::int64_t v, float s) {
  grad_rows<f8>(p, t, a, e, v, s);
}
MOXLAB_TARGET_AVX512 void grad_avx512(float* p, const std::int64_t* t, std::int64_t a, std::int64_t e, std::int64_t v, float s) {
  grad_rows<f16>(p, t, a, e, v, s);
}

// Rows per thread at least: a row is v exponentials (thousands for a vocabulary).
constexpr std::int64_t kRowGrainLoss = 8;

}  // namespace

void softmax_cross_entropy(const float* logits, const std::int64_t* targets, std::int64_t rows, std::int64_t v, float* probs,
                           float* loss) {
  const ForwardFn f = isa_variant<ForwardFn>(forward_portable, forward_avx2, forward_avx512);
  parallel_row_ranges(rows, kRowGrainLoss, [&](std::int64_t a, std::int64_t e) { f(logits, targets, a, e, v, probs, loss); });
}

void softmax_cross_entropy_grad(float* probs, const std::int64_t* targets, std::int64_t rows, std::int64_t v, float scale) {
  const GradFn f = isa_variant<GradFn>(grad_portable, grad_avx2, grad_avx512);
  parallel_row_ranges(rows, kRowGrainLoss, [&](std::int64_t a, std::int64_t e) { f(probs, targets, a, e, v, scale); });
}

}  // namespace moxlab
