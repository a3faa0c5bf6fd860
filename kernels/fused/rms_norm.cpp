#include "kernels/fused/rms_norm.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "kernels/runtime/cpu_features.h"

namespace moxlab {

namespace {

// 8 partial sums so the reduction vectorises. With `a`, the row normalised is x + a, written to `sum`
// first (a residual add fused into the norm that follows it: one pass over the rows instead of two).
MOXLAB_INLINE void rms_norm_row(const float* __restrict x, const float* __restrict a, float* __restrict sum, const float* __restrict w,
                  float* __restrict y, std::int64_t d, float eps) {
  constexpr int kLanes = 8;
  float part[kLanes] = {};
  std::int64_t c = 0;
  float total = 0;
  if (a) {  // the sum written and squared in one loop
    for (; c + kLanes <= d; c += kLanes)
      for (int j = 0; j < kLanes; ++j) {
        const float v = x[c + j] + a[c + j];
        sum[c + j] = v;
        part[j] += v * v;
      }
    for (; c < d; ++c) {
      const float v = x[c] + a[c];
      sum[c] = v;
      total += v * v;
    }
  } else {
    for (; c + kLanes <= d; c += kLanes)
      for (int j = 0; j < kLanes; ++j) part[j] += x[c + j] * x[c + j];
    for (; c < d; ++c) total += x[c] * x[c];
  }
  for (int j = 0; j < kLanes; ++j) total += part[j];
  const float r = 1.0f / std::sqrt(total / static_cast<float>(d) + eps);
  const float* normed = a ? sum : x;  // read back after the last write through sum
  for (std::int64_t i = 0; i < d; ++i) y[i] = normed[i] * r * w[i];
}

using RowFn = void (*)(const float*, const float*, float*, const float*, float*, std::int64_t, float);
void rms_norm_row_portable(const float* x, const float* a, float* sum, const float* w, float* y, std::int64_t d, float eps) {
  rms_norm_row(x, a, sum, w, y, d, eps);
}
MOXLAB_TARGET_AVX2 void rms_norm_row_avx2(const float* x, const float* a, float* sum, const float* w, float* y, std::int64_t d,
                                          float eps) {
  rms_norm_row(x, a, sum, w, y, d, eps);
}

// Rows through rms_norm_row on LibTorch's threads (contiguous halves for two threads: the rows the
// row-parallel products around it handle on the same thread).
void rms_norm_rows(const float* x, const float* a, float* sum, const float* w, float* y, std::int64_t rows, std::int64_t d, float eps) {
  const RowFn row = isa_variant<RowFn>(rms_norm_row_portable, rms_norm_row_avx2, rms_norm_row_avx2);
  at::parallel_for(0, rows, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      row(x + r * d, a ? a + r * d : nullptr, sum ? sum + r * d : nullptr, w, y + r * d, d, eps);
  });
}

}  // namespace

bool rms_norm_fusable(const torch::Tensor& x, const torch::Tensor& w) {
  return !torch::GradMode::is_enabled() && x.is_cpu() && x.scalar_type() == torch::kFloat && x.dim() >= 1 && x.is_contiguous() &&
         w.is_cpu() && w.scalar_type() == torch::kFloat && w.dim() == 1 && w.is_contiguous() && w.size(0) == x.size(-1);
}

torch::Tensor rms_norm_inference(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  TORCH_CHECK(rms_norm_fusable(x, w), "fused RMSNorm: needs contiguous float32 CPU input and weight, no autograd");
  auto y = torch::empty_like(x);
  const std::int64_t d = x.size(-1), rows = d > 0 ? x.numel() / d : 0;
  rms_norm_rows(x.data_ptr<float>(), nullptr, nullptr, w.data_ptr<float>(), y.data_ptr<float>(), rows, d, static_cast<float>(eps));
  return y;
}

std::pair<torch::Tensor, torch::Tensor> add_rms_norm_inference(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& w,
                                                               double eps) {
  TORCH_CHECK(rms_norm_fusable(x, w) && rms_norm_fusable(a, w) && a.sizes() == x.sizes(),
              "fused residual add + RMSNorm: needs contiguous float32 CPU inputs of one shape and a weight, no autograd");
  auto sum = torch::empty_like(x), y = torch::empty_like(x);
  const std::int64_t d = x.size(-1), rows = d > 0 ? x.numel() / d : 0;
  rms_norm_rows(x.data_ptr<float>(), a.data_ptr<float>(), sum.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), rows, d,
                static_cast<float>(eps));
  return {sum, y};
}

}  // namespace moxlab
