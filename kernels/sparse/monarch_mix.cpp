#include "kernels/sparse/monarch_mix.h"

#include <ATen/Parallel.h>

namespace moxlab {

torch::Tensor monarch_column_mix(const torch::Tensor& x, const torch::Tensor& b2) {
  const std::int64_t r = b2.size(0), groups = b2.size(1), n = x.size(0);
  TORCH_CHECK(x.dim() == 2 && x.size(1) == groups * r && b2.size(2) == groups, "Monarch column mix: shape mismatch");
  TORCH_CHECK(x.scalar_type() == torch::kFloat && b2.scalar_type() == torch::kFloat, "Monarch column mix: float32 only");
  const auto xc = x.contiguous();
  const auto bt = b2.permute({1, 2, 0}).contiguous();  // [k, j, c]: the weights of output group k, input group j along c
  auto y = torch::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  const float* bp = bt.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const std::int64_t width = groups * r;
  at::parallel_for(0, n, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t m = begin; m < end; ++m) {
      const float* __restrict xr = xp + m * width;
      for (std::int64_t k = 0; k < groups; ++k) {
        float* __restrict yk = yp + m * width + k * r;
        const float* __restrict bk = bp + k * groups * r;
        for (std::int64_t c = 0; c < r; ++c) yk[c] = bk[c] * xr[c];
        for (std::int64_t j = 1; j < groups; ++j) {
          const float* __restrict xj = xr + j * r;
          const float* __restrict bkj = bk + j * r;
          for (std::int64_t c = 0; c < r; ++c) yk[c] += bkj[c] * xj[c];
        }
      }
    }
  });
  return y;
}

}  // namespace moxlab
