#include "kernels/sparse/monarch_mix.h"

#include <ATen/Parallel.h>

#include <vector>

namespace moxlab {

torch::Tensor monarch_mix_weights(const torch::Tensor& b2) {
  TORCH_CHECK(b2.dim() == 3 && b2.size(1) == b2.size(2) && b2.scalar_type() == torch::kFloat, "Monarch column mix: b2 must be [r, groups, groups] float32");
  return b2.permute({1, 2, 0}).contiguous();  // [k, j, c]: the weights of output group k, input group j along c
}

namespace {

// Output groups k0 .. k0 + K - 1 of the row, columns c0 .. c0 + C - 1: K x C accumulators in registers
// (K independent chains hide the multiply-add latency), one store per output.
template <int K, int C>
__attribute__((always_inline)) inline void mix_tile(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups,
                     std::int64_t r, std::int64_t k0, std::int64_t c0) {
  float acc[K][C] = {};
  for (std::int64_t i = 0; i < n_inputs; ++i) {
    const float* x = inputs[i].x + c0;
    for (int k = 0; k < K; ++k) {
      const float* w = bt + ((k0 + k) * groups + inputs[i].group) * r + c0;
      for (int c = 0; c < C; ++c) acc[k][c] += w[c] * x[c];
    }
  }
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < C; ++c) y[(k0 + k) * r + c0 + c] = acc[k][c];
}

}  // namespace

// Compiled for AVX2 + FMA as well as the baseline ISA, picked at load time (GCC function multiversioning):
// the build targets generic x86-64, and this loop is the whole cost of the mix.
__attribute__((target_clones("arch=x86-64-v3", "default")))
void monarch_mix_row(const MixInput* inputs, std::int64_t n_inputs, const float* bt, float* y, std::int64_t groups,
                     std::int64_t r) {
  constexpr int kGroups = 4, kColumns = 16;
  std::int64_t c0 = 0;
  for (; c0 + kColumns <= r; c0 += kColumns) {
    std::int64_t k0 = 0;
    for (; k0 + kGroups <= groups; k0 += kGroups) mix_tile<kGroups, kColumns>(inputs, n_inputs, bt, y, groups, r, k0, c0);
    for (; k0 < groups; ++k0) mix_tile<1, kColumns>(inputs, n_inputs, bt, y, groups, r, k0, c0);
  }
  for (; c0 < r; ++c0)
    for (std::int64_t k0 = 0; k0 < groups; ++k0) mix_tile<1, 1>(inputs, n_inputs, bt, y, groups, r, k0, c0);
}

torch::Tensor monarch_column_mix(const torch::Tensor& x, const torch::Tensor& b2) {
  const std::int64_t r = b2.size(0), groups = b2.size(1), n = x.size(0);
  TORCH_CHECK(x.dim() == 2 && x.size(1) == groups * r && b2.size(2) == groups, "Monarch column mix: shape mismatch");
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "Monarch column mix: float32 only");
  const auto xc = x.contiguous();
  const auto bt = monarch_mix_weights(b2);
  auto y = torch::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  const float* bp = bt.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const std::int64_t width = groups * r;
  at::parallel_for(0, n, 16, [&](std::int64_t begin, std::int64_t end) {
    std::vector<MixInput> in(static_cast<std::size_t>(groups));
    for (std::int64_t m = begin; m < end; ++m) {
      for (std::int64_t j = 0; j < groups; ++j) in[static_cast<std::size_t>(j)] = {j, xp + m * width + j * r};
      monarch_mix_row(in.data(), groups, bp, yp + m * width, groups, r);
    }
  });
  return y;
}

}  // namespace moxlab
