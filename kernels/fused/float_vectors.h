// Eight- and sixteen-float vectors for the hand-written CPU kernels (GCC's vector extension), and a
// vectorised e^x. Include only in the kernels' .cpp files: everything here is always inlined into the
// ISA variants of an op (kernels/runtime/cpu_features.h), so one source serves AVX-512, AVX2 + FMA and SSE2.
#pragma once
#include <cstdint>

#include "kernels/runtime/cpu_features.h"  // MOXLAB_INLINE

namespace moxlab::simd {

// Eight floats in GCC's vector extension: one AVX2 register in an AVX2 variant, two SSE ones in the
// portable one; multiply-adds contract to FMA instructions where the target has them.
typedef float f8 __attribute__((vector_size(32)));
typedef std::int32_t i8 __attribute__((vector_size(32)));
// The helpers taking and returning f8 are always inlined into the multiversioned loops: no call crosses an
// ABI boundary, so GCC's note that AVX vector arguments change the ABI does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

// Sixteen floats: one AVX-512 register, for loops compiled for AVX-512 only (elsewhere four SSE registers).
typedef float f16 __attribute__((vector_size(64)));
typedef std::int32_t i16 __attribute__((vector_size(64)));
// The integer vector of a float vector's width (for the exponent bits in expv).
template <class F> struct IntVec;
template <> struct IntVec<f8> { using type = i8; };
template <> struct IntVec<f16> { using type = i16; };
template <class F> constexpr int kLanes = static_cast<int>(sizeof(F) / sizeof(float));
// The sum of a vector's lanes.
template <class F>
MOXLAB_INLINE float lane_sum(F v) {
  float s = 0;
  for (int l = 0; l < kLanes<F>; ++l) s += v[l];
  return s;
}

template <class F>
MOXLAB_INLINE F loadv(const float* p) {
  F v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class F>
MOXLAB_INLINE void storev(float* p, F v) { __builtin_memcpy(p, &v, sizeof v); }
// All lanes x. Inlined into an AVX2 or portable variant, 0 + x compiles to an add and a broadcast; a per-lane
// initialiser, x - 0 or a shuffle compile to a chain of lane inserts there (GCC 12), several times slower.
// The 16-float type only runs in functions compiled for AVX-512, where a shuffle of lane 0 is one
// broadcast (from memory, too), 0 + x a scalar add before each broadcast (in the attention tiles' inner
// loops), and a per-lane initialiser a chain of masked broadcasts.
template <class F>
MOXLAB_INLINE F splatv(float x) {
  if constexpr (kLanes<F> == 16)
    return __builtin_shuffle(F{x}, decltype(F{} == F{}){});
  else
    return F{} + x;
}

MOXLAB_INLINE f8 load8(const float* p) { return loadv<f8>(p); }
MOXLAB_INLINE void store8(float* p, f8 v) { storev(p, v); }
MOXLAB_INLINE f8 splat(float x) { return splatv<f8>(x); }

// e^x for x <= 0 (softmax scores minus their row maximum, SiLU's e^-|x|): x = n ln2 + r with
// n = round(x / ln2), |r| <= ln2/2; e^r by Cephes' degree-6 minimax polynomial for expf (relative error
// ~1e-7); 2^n built in the exponent bits. Below -87.3 the result would leave float's normal range; it is clamped there (e^-87.3 ~ 1e-38,
// nothing next to a row maximum's e^0 = 1).
template <class F>
MOXLAB_INLINE F expv(F x) {
  using I = typename IntVec<F>::type;
  const F lowest = splatv<F>(-87.3f);
  x = x < lowest ? lowest : x;
  // Adding 1.5 * 2^23 rounds x / ln2 to an integer held in the low mantissa bits: n as a float and as
  // the integer difference of the bit patterns, with no conversion instruction.
  const F magic = splatv<F>(12582912.0f);
  const F shifted = x * splatv<F>(1.44269504088896341f) + magic;
  const F n = shifted - magic;
  const I n_int = (I)shifted - (I)magic;
  const F r = x - n * splatv<F>(0.693359375f) - n * splatv<F>(-2.12194440e-4f);  // ln 2 in two parts: r exact
  F p = splatv<F>(1.9875691500e-4f);
  p = p * r + splatv<F>(1.3981999507e-3f);
  p = p * r + splatv<F>(8.3334519073e-3f);
  p = p * r + splatv<F>(4.1665795894e-2f);
  p = p * r + splatv<F>(1.6666665459e-1f);
  p = p * r + splatv<F>(5.0000001201e-1f);
  const F er = p * r * r + r + splatv<F>(1.0f);
  return er * (F)((n_int + 127) << 23);
}
MOXLAB_INLINE f8 exp8(f8 x) { return expv(x); }

// A row of a softmax: out[j] = e^{scale x[j] - scale m} for j < n (m the row's maximum, so every exponent
// is <= 0), returning their sum, then out[0 .. n) times 1 / that sum (normalise_row). Whole vectors of F,
// the tail one value at a time (for rows with nothing past n). x and out may be the same memory.
template <class F>
MOXLAB_INLINE float exp_shifted_row(const float* x, float* out, std::int64_t n, float m, float scale) {
  constexpr int W = kLanes<F>;
  const F sc = splatv<F>(scale), shift = splatv<F>(scale * m);
  F sum{};
  std::int64_t j = 0;
  for (; j + W <= n; j += W) {
    const F e = expv(loadv<F>(x + j) * sc - shift);
    storev(out + j, e);
    sum += e;
  }
  float tail = 0;
  for (; j < n; ++j) {
    float lane[W] = {};
    lane[0] = x[j];
    const float e = expv(loadv<F>(lane) * sc - shift)[0];
    out[j] = e;
    tail += e;
  }
  return lane_sum(sum) + tail;
}
template <class F>
MOXLAB_INLINE void normalise_row(float* p, std::int64_t n, float total) {
  constexpr int W = kLanes<F>;
  const F inv = splatv<F>(1.0f / total);
  std::int64_t j = 0;
  for (; j + W <= n; j += W) storev(p + j, loadv<F>(p + j) * inv);
  for (; j < n; ++j) p[j] *= inv[0];
}

// SwiGLU's SiLU(g) * u (Shazeer 2020), SiLU(g) = g * sigmoid(g): sigmoid(g) is 1 / (1 + e^-|g|) for g >= 0
// and e^-|g| / (1 + e^-|g|) below, so e^x is only taken of x <= 0 and never overflows.
template <class F>
MOXLAB_INLINE F sigmoidv(F g) {
  const F neg_abs = g < F{} ? g : -g;
  const F e = expv(neg_abs);
  return (g < F{} ? e : splatv<F>(1.0f)) / (splatv<F>(1.0f) + e);
}
template <class F>
MOXLAB_INLINE F silu_timesv(F g, F u) { return g * sigmoidv(g) * u; }
MOXLAB_INLINE f8 silu_times(f8 g, f8 u) { return silu_timesv(g, u); }

}  // namespace moxlab::simd
