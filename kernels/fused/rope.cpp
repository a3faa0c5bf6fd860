#include "kernels/fused/rope.h"

#include <ATen/Parallel.h>

#include <algorithm>

#include "kernels/fused/float_vectors.h"

namespace moxlab {

namespace {

using simd::f8;
using simd::i8;

// One head's pairs: out[2i] = x0 c_i - x1 s_i, out[2i + 1] = x0 s_i + x1 c_i. Eight pairs per two vectors:
// each vector times its cosines (duplicated per pair) plus its pair-swapped self times the signed sines.
MOXLAB_INLINE void rotate_pairs(const float* in, const float* c, const float* s, std::int64_t half, float* out) {
  const i8 swap = {1, 0, 3, 2, 5, 4, 7, 6}, lo = {0, 0, 1, 1, 2, 2, 3, 3}, hi = {4, 4, 5, 5, 6, 6, 7, 7};
  const f8 sign = {-1, 1, -1, 1, -1, 1, -1, 1};
  std::int64_t i = 0;
  for (; i + 8 <= half; i += 8) {
    const f8 c8 = simd::load8(c + i), s8 = simd::load8(s + i);
    const f8 x0 = simd::load8(in + 2 * i), x1 = simd::load8(in + 2 * i + 8);
    simd::store8(out + 2 * i, x0 * __builtin_shuffle(c8, lo) + __builtin_shuffle(x0, swap) * (__builtin_shuffle(s8, lo) * sign));
    simd::store8(out + 2 * i + 8, x1 * __builtin_shuffle(c8, hi) + __builtin_shuffle(x1, swap) * (__builtin_shuffle(s8, hi) * sign));
  }
  for (; i < half; ++i) {
    const float x0 = in[2 * i], x1 = in[2 * i + 1];
    out[2 * i] = x0 * c[i] - x1 * s[i];
    out[2 * i + 1] = x0 * s[i] + x1 * c[i];
  }
}

using PairsFn = void (*)(const float*, const float*, const float*, std::int64_t, float*);
void rotate_pairs_portable(const float* in, const float* c, const float* s, std::int64_t half, float* out) {
  rotate_pairs(in, c, s, half, out);
}
MOXLAB_TARGET_AVX2 void rotate_pairs_avx2(const float* in, const float* c, const float* s, std::int64_t half, float* out) {
  rotate_pairs(in, c, s, half, out);
}

}  // namespace

bool rope_fusable(const torch::Tensor& x, const torch::Tensor& cos) {
  return !torch::GradMode::is_enabled() && x.is_cpu() && x.scalar_type() == torch::kFloat && x.dim() == 4 && x.stride(3) == 1 &&
         x.size(3) % 2 == 0 && cos.is_cpu() && cos.scalar_type() == torch::kFloat && cos.is_contiguous() && cos.size(1) * 2 == x.size(3);
}

torch::Tensor rope_inference(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, std::int64_t start,
                             const torch::Tensor& positions) {
  TORCH_CHECK(rope_fusable(x, cos) && sin.is_contiguous() && sin.sizes() == cos.sizes(), "fused RoPE: shape, dtype or layout mismatch");
  const std::int64_t B = x.size(0), T = x.size(1), H = x.size(2), half = x.size(3) / 2;
  const torch::Tensor pos = positions.defined() ? positions.to(torch::kCPU).contiguous() : torch::Tensor();
  TORCH_CHECK(!pos.defined() || (pos.scalar_type() == torch::kLong && pos.numel() == B * T), "fused RoPE: one int64 position per row");
  const std::int64_t* pp = pos.defined() ? pos.data_ptr<std::int64_t>() : nullptr;
  const std::int64_t last = pp ? (B * T > 0 ? *std::max_element(pp, pp + B * T) : -1) : start + T - 1;
  TORCH_CHECK(last < cos.size(0) && (!pp || B * T == 0 || *std::min_element(pp, pp + B * T) >= 0), "sequence longer than model.max_seq_len");
  auto y = torch::empty({B, T, H, 2 * half}, x.options());
  const float* xp = x.data_ptr<float>();
  const float *cp = cos.data_ptr<float>(), *sp = sin.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const std::int64_t sb = x.stride(0), st = x.stride(1), sh = x.stride(2);
  const PairsFn rotate = isa_variant<PairsFn>(rotate_pairs_portable, rotate_pairs_avx2, rotate_pairs_avx2);
  at::parallel_for(0, B * T, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t bt = begin; bt < end; ++bt) {
      const std::int64_t b = bt / T, t = bt % T;
      const std::int64_t at = pp ? pp[bt] : start + t;
      const float* c = cp + at * half;
      const float* s = sp + at * half;
      for (std::int64_t h = 0; h < H; ++h) rotate(xp + b * sb + t * st + h * sh, c, s, half, yp + (bt * H + h) * 2 * half);
    }
  });
  return y;
}

}  // namespace moxlab
