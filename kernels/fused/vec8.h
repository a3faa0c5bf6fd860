// Eight-float vectors for the hand-written CPU kernels (GCC's vector extension), and a vectorised e^x.
// Include only in the kernels' .cpp files: everything here is always inlined into functions compiled with
// target_clones (x86-64-v3 and the baseline ISA), so one source serves AVX2 + FMA and plain SSE2.
#pragma once
#include <cstdint>

namespace moxlab::vec8 {

// Eight floats in GCC's vector extension: one AVX2 register in an x86-64-v3 clone, two SSE ones in
// the baseline clone; multiply-adds contract to FMA instructions where the target has them.
typedef float f8 __attribute__((vector_size(32)));
typedef std::int32_t i8 __attribute__((vector_size(32)));
#define MOXLAB_INLINE __attribute__((always_inline)) inline
// The helpers taking and returning f8 are always inlined into the multiversioned loops: no call crosses an
// ABI boundary, so GCC's note that AVX vector arguments change the ABI does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

MOXLAB_INLINE f8 load8(const float* p) {
  f8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
MOXLAB_INLINE void store8(float* p, f8 v) { __builtin_memcpy(p, &v, sizeof v); }
// All lanes x. Inlined into a target_clones function, 0 + x compiles to an add and a broadcast; x - 0, an
// eight-element initialiser or a shuffle compile to a chain of lane inserts there (GCC 12), several times slower.
MOXLAB_INLINE f8 splat(float x) { return f8{} + x; }

// e^x for x <= 0 (softmax scores minus their row maximum, SiLU's e^-|x|): x = n ln2 + r with
// n = round(x / ln2), |r| <= ln2/2; e^r by Cephes' degree-6 minimax polynomial for expf (relative error
// ~1e-7); 2^n built in the exponent bits. Below -87.3 the result would leave float's normal range; it is clamped there (e^-87.3 ~ 1e-38,
// nothing next to a row maximum's e^0 = 1).
MOXLAB_INLINE f8 exp8(f8 x) {
  const f8 lowest = splat(-87.3f);
  x = x < lowest ? lowest : x;
  // Adding 1.5 * 2^23 rounds x / ln2 to an integer held in the low mantissa bits: n as a float and as
  // the integer difference of the bit patterns, with no conversion instruction.
  const f8 magic = splat(12582912.0f);
  const f8 shifted = x * splat(1.44269504088896341f) + magic;
  const f8 n = shifted - magic;
  const i8 n_int = (i8)shifted - (i8)magic;
  const f8 r = x - n * splat(0.693359375f) - n * splat(-2.12194440e-4f);  // ln 2 in two parts: r exact
  f8 p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  const f8 er = p * r * r + r + splat(1.0f);
  return er * (f8)((n_int + 127) << 23);
}

// SwiGLU's SiLU(g) * u (Shazeer 2020), SiLU(g) = g * sigmoid(g): sigmoid(g) is 1 / (1 + e^-|g|) for g >= 0
// and e^-|g| / (1 + e^-|g|) below, so e^x is only taken of x <= 0 and never overflows.
MOXLAB_INLINE f8 silu_times(f8 g, f8 u) {
  const f8 neg_abs = g < f8{} ? g : -g;
  const f8 e = exp8(neg_abs);
  const f8 sigmoid = (g < f8{} ? e : splat(1.0f)) / (splat(1.0f) + e);
  return g * sigmoid * u;
}

}  // namespace moxlab::vec8
