#include "kernels/fused/rms_norm.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "kernels/fused/float_vectors.h"
#include "kernels/runtime/cpu_features.h"

namespace moxlab {

namespace {

// 8 partial sums so the reduction vectorises. With `a`, the row normalised is x + a, written to `sum`
// first (a residual add fused into the norm that follows it: one pass over the rows instead of two).
MOXLAB_INLINE void rms_norm_row(const float* __restrict x, const float* __restrict a, float* __restrict sum, const float* __restrict w,
                  float* __restrict y, std::int64_t d, float eps, float* inv_rms) {
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
  if (inv_rms) *inv_rms = r;
  const float* normed = a ? sum : x;  // read back after the last write through sum
  for (std::int64_t i = 0; i < d; ++i) y[i] = normed[i] * r * w[i];
}

using RowFn = void (*)(const float*, const float*, float*, const float*, float*, std::int64_t, float, float*);
void rms_norm_row_portable(const float* x, const float* a, float* sum, const float* w, float* y, std::int64_t d, float eps, float* r) {
  rms_norm_row(x, a, sum, w, y, d, eps, r);
}
MOXLAB_TARGET_AVX2 void rms_norm_row_avx2(const float* x, const float* a, float* sum, const float* w, float* y, std::int64_t d,
                                          float eps, float* r) {
  rms_norm_row(x, a, sum, w, y, d, eps, r);
}

// Rows through rms_norm_row on LibTorch's threads (contiguous halves for two threads: the rows the
// row-parallel products around it handle on the same thread).
// inv_rms (optional): each row's 1 / RMS, for the backward.
void rms_norm_rows(const float* x, const float* a, float* sum, const float* w, float* y, std::int64_t rows, std::int64_t d, float eps,
                   float* inv_rms = nullptr) {
  const RowFn row = isa_variant<RowFn>(rms_norm_row_portable, rms_norm_row_avx2, rms_norm_row_avx2);
  at::parallel_for(0, rows, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      row(x + r * d, a ? a + r * d : nullptr, sum ? sum + r * d : nullptr, w, y + r * d, d, eps, inv_rms ? inv_rms + r : nullptr);
  });
}

// One row's backward: with g = w * dy and r = 1 / RMS(x), dx = r g - x r^3 mean(g x) (the mean's own
// gradient through r), and the row's dy x r added to dw.
template <class F>
MOXLAB_INLINE void rms_norm_backward_row(const float* __restrict dy, const float* __restrict x, const float* __restrict w, float r,
                                         float* __restrict dx, float* __restrict dw, std::int64_t d) {
  constexpr int W = simd::kLanes<F>;
  F dot{};
  std::int64_t j = 0;
  for (; j + W <= d; j += W) dot += simd::loadv<F>(w + j) * simd::loadv<F>(dy + j) * simd::loadv<F>(x + j);
  float total = simd::lane_sum(dot);
  for (; j < d; ++j) total += w[j] * dy[j] * x[j];
  const float c = r * r * r * total / static_cast<float>(d);
  const F rv = simd::splatv<F>(r), cv = simd::splatv<F>(c);
  for (j = 0; j + W <= d; j += W) {
    const F dyv = simd::loadv<F>(dy + j), xv = simd::loadv<F>(x + j);
    simd::storev(dx + j, rv * simd::loadv<F>(w + j) * dyv - xv * cv);
    simd::storev(dw + j, simd::loadv<F>(dw + j) + dyv * xv * rv);
  }
  for (; j < d; ++j) {
    dx[j] = r * w[j] * dy[j] - x[j] * c;
    dw[j] += dy[j] * x[j] * r;
  }
}

using BackwardFn = void (*)(const float*, const float*, const float*, const float*, float*, float*, std::int64_t, std::int64_t, std::int64_t);
template <class F>
MOXLAB_INLINE void rms_norm_backward_rows(const float* dy, const float* x, const float* w, const float* inv_rms, float* dx, float* dw,
                                          std::int64_t r0, std::int64_t r1, std::int64_t d) {
  for (std::int64_t r = r0; r < r1; ++r) rms_norm_backward_row<F>(dy + r * d, x + r * d, w, inv_rms[r], dx + r * d, dw, d);
}
void backward_portable(const float* dy, const float* x, const float* w, const float* ir, float* dx, float* dw, std::int64_t a,
                       std::int64_t e, std::int64_t d) {
  rms_norm_backward_rows<simd::f8>(dy, x, w, ir, dx, dw, a, e, d);
}
MOXLAB_TARGET_AVX2 void backward_avx2(const float* dy, const float* x, const float* w, const float* ir, float* dx, float* dw,
                                      std::int64_t a, std::int64_t e, std::int64_t d) {
  rms_norm_backward_rows<simd::f8>(dy, x, w, ir, dx, dw, a, e, d);
}
MOXLAB_TARGET_AVX512 void backward_avx512(const float* dy, const float* x, const float* w, const float* ir, float* dx, float* dw,
                                          std::int64_t a, std::int64_t e, std::int64_t d) {
  rms_norm_backward_rows<simd::f16>(dy, x, w, ir, dx, dw, a, e, d);
}

}  // namespace

bool rms_norm_training_fits(const torch::Tensor& x, const torch::Tensor& w) {
  return x.is_cpu() && x.scalar_type() == torch::kFloat && x.dim() >= 1 && x.is_contiguous() &&
         w.is_cpu() && w.scalar_type() == torch::kFloat && w.dim() == 1 && w.is_contiguous() && w.size(0) == x.size(-1);
}

bool rms_norm_fusable(const torch::Tensor& x, const torch::Tensor& w) {
  return !torch::GradMode::is_enabled() && rms_norm_training_fits(x, w);
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

RmsNormForward rms_norm_training_forward(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  TORCH_CHECK(rms_norm_training_fits(x, w), "fused RMSNorm (training): needs contiguous float32 CPU input and weight");
  const std::int64_t d = x.size(-1), rows = d > 0 ? x.numel() / d : 0;
  RmsNormForward f{torch::empty_like(x), torch::empty({rows}, x.options())};
  rms_norm_rows(x.data_ptr<float>(), nullptr, nullptr, w.data_ptr<float>(), f.y.data_ptr<float>(), rows, d, static_cast<float>(eps),
                f.inv_rms.data_ptr<float>());
  return f;
}

std::pair<torch::Tensor, torch::Tensor> rms_norm_backward(const torch::Tensor& dy, const torch::Tensor& x, const torch::Tensor& w,
                                                          const torch::Tensor& inv_rms) {
  TORCH_CHECK(rms_norm_training_fits(x, w) && dy.sizes() == x.sizes() && dy.is_contiguous() && dy.scalar_type() == torch::kFloat &&
                  inv_rms.is_contiguous() && inv_rms.numel() * std::max<std::int64_t>(1, x.size(-1)) == x.numel(),
              "fused RMSNorm backward: needs contiguous float32 dy, x, weight and per-row 1 / RMS of matching shapes");
  const std::int64_t d = x.size(-1), rows = d > 0 ? x.numel() / d : 0;
  auto dx = torch::empty_like(x);
  // Each thread sums its rows' share of dw in its own row of partial sums, added up after.
  const std::int64_t parts = std::max<std::int64_t>(1, std::min<std::int64_t>(at::get_num_threads(), rows / 64));
  auto partial = torch::zeros({parts, d}, x.options());
  const auto f = isa_variant<BackwardFn>(backward_portable, backward_avx2, backward_avx512);
  at::parallel_for(0, parts, 1, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p)
      f(dy.data_ptr<float>(), x.data_ptr<float>(), w.data_ptr<float>(), inv_rms.data_ptr<float>(), dx.data_ptr<float>(),
        partial.data_ptr<float>() + p * d, rows * p / parts, rows * (p + 1) / parts, d);
  });
  return {dx, partial.sum(0)};
}

}  // namespace moxlab
