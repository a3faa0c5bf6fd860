#include "kernels/sparse/top_k_mask.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/fused/float_vectors.h"

namespace moxlab {

namespace {

using namespace simd;

// Rows up to this wide take the counting pass first: eight vectors of values and eight of ranks in registers.
constexpr std::int64_t kCountingWidth = 64;

// The counting pass: rank[i] = how many values of the row are strictly larger than x[i], for all i at
// once (each x[j] against the whole row, eight at a time, V vectors); i is kept when rank[i] < k. Exact
// unless values tie across the k-th place: then more than k ranks fall below k, and it returns false (the
// caller sorts). The row is copied into a buffer padded with -inf, which outranks nothing.
template <int V>
MOXLAB_INLINE bool count_ranks(const float* x, std::int64_t n, std::int64_t k, float* mask) {
  float padded[8 * V];
  std::copy(x, x + n, padded);
  std::fill(padded + n, padded + 8 * V, -std::numeric_limits<float>::infinity());
  f8 values[V];
  i8 rank[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    values[v] = load8(padded + 8 * v);
    rank[v] = i8{};
  }
  for (std::int64_t j = 0; j < n; ++j) {
    const f8 xj = splat(x[j]);
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) rank[v] -= (i8)(xj > values[v]);  // a true compare is -1
  }
  // Branch-free (a branch per value mispredicts half the time): 1.0f where rank < k, the compare's
  // all-ones lanes selecting its bits. The padding lanes are neither copied nor counted.
  const i8 limit = i8{} + static_cast<std::int32_t>(k), one = (i8)splat(1.0f);
  float out[8 * V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    const i8 keep = rank[v] < limit;
    store8(out + 8 * v, (f8)(keep & one));
  }
  std::copy(out, out + n, mask);
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) count += out[i] != 0.0f;
  return count == k;
}

MOXLAB_INLINE bool top_k_by_counting(const float* x, std::int64_t n, std::int64_t k, float* mask) {
  switch ((n + 7) / 8) {
    case 1: return count_ranks<1>(x, n, k, mask);
    case 2: return count_ranks<2>(x, n, k, mask);
    case 3: return count_ranks<3>(x, n, k, mask);
    case 4: return count_ranks<4>(x, n, k, mask);
    case 5: return count_ranks<5>(x, n, k, mask);
    case 6: return count_ranks<6>(x, n, k, mask);
    case 7: return count_ranks<7>(x, n, k, mask);
    default: return count_ranks<8>(x, n, k, mask);
  }
}

using CountingFn = bool (*)(const float*, std::int64_t, std::int64_t, float*);
bool top_k_by_counting_portable(const float* x, std::int64_t n, std::int64_t k, float* mask) { return top_k_by_counting(x, n, k, mask); }
MOXLAB_TARGET_AVX2 bool top_k_by_counting_avx2(const float* x, std::int64_t n, std::int64_t k, float* mask) {
  return top_k_by_counting(x, n, k, mask);
}

}  // namespace

void top_k_mask_rows(const float* scores, std::int64_t rows, std::int64_t n, std::int64_t k, float* mask, std::int64_t mask_stride) {
  TORCH_CHECK(k >= 0 && k <= n, "top-k mask: k outside 0 .. " + std::to_string(n));
  std::vector<std::int32_t> idx;
  const CountingFn by_counting = isa_variant<CountingFn>(top_k_by_counting_portable, top_k_by_counting_avx2, top_k_by_counting_avx2);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* x = scores + r * n;
    float* m = mask + r * mask_stride;
    if (n <= kCountingWidth && by_counting(x, n, k, m)) continue;
    std::fill(m, m + n, 0.0f);
    idx.resize(static_cast<std::size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    // The k largest first (larger score, then lower index), in no particular order among themselves.
    std::nth_element(idx.begin(), idx.begin() + k, idx.end(),
                     [x](std::int32_t a, std::int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
    for (std::int64_t j = 0; j < k; ++j) m[idx[static_cast<std::size_t>(j)]] = 1.0f;
  }
}

torch::Tensor top_k_mask(const torch::Tensor& scores, std::int64_t k) {
  TORCH_CHECK(scores.dim() >= 1 && scores.is_cpu() && scores.scalar_type() == torch::kFloat, "top-k mask: float32 CPU scores");
  const std::int64_t n = scores.size(-1);
  TORCH_CHECK(k >= 0 && k <= n, "top-k mask: k outside 0 .. " + std::to_string(n));
  const auto s = scores.contiguous();
  auto mask = torch::empty_like(s);
  const std::int64_t rows = n > 0 ? s.numel() / n : 0;
  at::parallel_for(0, rows, 64, [&](std::int64_t begin, std::int64_t end) {
    top_k_mask_rows(s.data_ptr<float>() + begin * n, end - begin, n, k, mask.data_ptr<float>() + begin * n, n);
  });
  return mask;
}

}  // namespace moxlab
