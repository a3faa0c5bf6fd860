#include "kernels/sparse/top_k_mask.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace moxlab {

torch::Tensor top_k_mask(const torch::Tensor& scores, std::int64_t k) {
  TORCH_CHECK(scores.dim() >= 1 && scores.is_cpu() && scores.scalar_type() == torch::kFloat, "top-k mask: float32 CPU scores");
  const std::int64_t n = scores.size(-1);
  TORCH_CHECK(k >= 0 && k <= n, "top-k mask: k outside 0 .. " + std::to_string(n));
  const auto s = scores.contiguous();
  auto mask = torch::zeros_like(s);
  const std::int64_t rows = n > 0 ? s.numel() / n : 0;
  const float* sp = s.data_ptr<float>();
  float* mp = mask.data_ptr<float>();
  at::parallel_for(0, rows, 64, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::int32_t> idx(static_cast<std::size_t>(n));
    for (std::int64_t r = begin; r < end; ++r) {
      const float* x = sp + r * n;
      std::iota(idx.begin(), idx.end(), 0);
      // The k largest first (larger score, then lower index), in no particular order among themselves.
      std::nth_element(idx.begin(), idx.begin() + k, idx.end(),
                       [x](std::int32_t a, std::int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
      for (std::int64_t j = 0; j < k; ++j) mp[r * n + idx[static_cast<std::size_t>(j)]] = 1.0f;
    }
  });
  return mask;
}

}  // namespace moxlab
