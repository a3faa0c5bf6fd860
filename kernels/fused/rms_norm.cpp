#include "kernels/fused/rms_norm.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace moxlab {

namespace {

// Compiled for AVX2 + FMA as well as the baseline ISA, picked at load time; 8 partial sums so the
// reduction vectorises.
__attribute__((target_clones("arch=x86-64-v3", "default")))
void rms_norm_row(const float* x, const float* w, float* y, std::int64_t d, float eps) {
  constexpr int kLanes = 8;
  float part[kLanes] = {};
  std::int64_t c = 0;
  for (; c + kLanes <= d; c += kLanes)
    for (int j = 0; j < kLanes; ++j) part[j] += x[c + j] * x[c + j];
  float sum = 0;
  for (; c < d; ++c) sum += x[c] * x[c];
  for (int j = 0; j < kLanes; ++j) sum += part[j];
  const float r = 1.0f / std::sqrt(sum / static_cast<float>(d) + eps);
  for (std::int64_t i = 0; i < d; ++i) y[i] = x[i] * r * w[i];
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
  const float* xp = x.data_ptr<float>();
  const float* wp = w.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, rows, 64, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) rms_norm_row(xp + r * d, wp, yp + r * d, d, static_cast<float>(eps));
  });
  return y;
}

}  // namespace moxlab
