#include "kernels/fused/swiglu.h"

#include "kernels/fused/float_vectors.h"

#include <ATen/Parallel.h>

namespace moxlab {

namespace {

using namespace simd;

MOXLAB_INLINE void swiglu_row(float* g, const float* u, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) store8(g + j, silu_times(load8(g + j), load8(u + j)));
  if (j < n) {  // the tail through padded copies
    float gt[8] = {}, ut[8] = {};
    for (std::int64_t l = j; l < n; ++l) gt[l - j] = g[l], ut[l - j] = u[l];
    const f8 y = silu_times(load8(gt), load8(ut));
    for (std::int64_t l = j; l < n; ++l) g[l] = y[l - j];
  }
}

using RowFn = void (*)(float*, const float*, std::int64_t);
void swiglu_row_portable(float* g, const float* u, std::int64_t n) { swiglu_row(g, u, n); }
MOXLAB_TARGET_AVX2 void swiglu_row_avx2(float* g, const float* u, std::int64_t n) { swiglu_row(g, u, n); }

// Rows of one stride: contiguous, or [rows, n] with contiguous rows (a column slice of a wider product).
bool rows_of_one_stride(const torch::Tensor& t) {
  return t.is_contiguous() || (t.dim() == 2 && (t.size(1) <= 1 || t.stride(1) == 1));
}

}  // namespace

bool swiglu_fusable(const torch::Tensor& gate, const torch::Tensor& up) {
  return !torch::GradMode::is_enabled() && gate.is_cpu() && up.is_cpu() && gate.scalar_type() == torch::kFloat &&
         up.scalar_type() == torch::kFloat && gate.dim() >= 1 && gate.sizes() == up.sizes() && rows_of_one_stride(gate) &&
         rows_of_one_stride(up);
}

torch::Tensor swiglu_inference(torch::Tensor gate, const torch::Tensor& up) {
  TORCH_CHECK(swiglu_fusable(gate, up), "fused SwiGLU: needs float32 CPU gate and up of one shape with contiguous rows, no autograd");
  const std::int64_t n = gate.size(-1), rows = n > 0 ? gate.numel() / n : 0;
  const std::int64_t gs = gate.is_contiguous() ? n : gate.stride(0), us = up.is_contiguous() ? n : up.stride(0);
  float* gp = gate.data_ptr<float>();
  const float* up_p = up.data_ptr<float>();
  const RowFn row = isa_variant<RowFn>(swiglu_row_portable, swiglu_row_avx2, swiglu_row_avx2);
  at::parallel_for(0, rows, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) row(gp + r * gs, up_p + r * us, n);
  });
  return gate;
}

}  // namespace moxlab
