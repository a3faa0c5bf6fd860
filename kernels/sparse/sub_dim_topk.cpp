#include "kernels/sparse/sub_dim_topk.h"

#include <ATen/Parallel.h>

#include <cmath>

namespace moxlab {

SubDimTopK sub_dim_top_k(const torch::Tensor& logits, int shared, int routed, bool scaling) {
  TORCH_CHECK(logits.dim() == 2 && logits.is_cpu() && logits.scalar_type() == torch::kFloat, "sub-dim top-k: [M, N] float32 CPU logits");
  const std::int64_t M = logits.size(0), N = logits.size(1);
  TORCH_CHECK(shared >= 0 && routed >= 0 && shared + routed <= N, "sub-dim top-k: shared + routed exceeds N");
  const auto x = logits.contiguous();
  SubDimTopK r{torch::empty({M, N}), torch::zeros({M, N}, torch::kBool), torch::zeros({M, N}), torch::zeros({M, N})};
  const float* xp = x.data_ptr<float>();
  float *pp = r.probs.data_ptr<float>(), *gp = r.gates.data_ptr<float>(), *wp = r.weights.data_ptr<float>();
  bool* ap = r.active.data_ptr<bool>();
  at::parallel_for(0, M, 128, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t m = begin; m < end; ++m) {
      const float* z = xp + m * N;
      float *p = pp + m * N, *g = gp + m * N, *w = wp + m * N;
      bool* a = ap + m * N;
      float top = z[0];
      for (std::int64_t i = 1; i < N; ++i) top = std::max(top, z[i]);
      float sum = 0;
      for (std::int64_t i = 0; i < N; ++i) sum += (p[i] = std::exp(z[i] - top));
      const float inv = 1.0f / sum;
      for (std::int64_t i = 0; i < N; ++i) p[i] *= inv;
      for (int i = 0; i < shared; ++i) a[i] = true;
      for (int k = 0; k < routed; ++k) {  // routed is small (top-1 or a few): repeated argmax
        std::int64_t best = -1;
        for (std::int64_t i = shared; i < N; ++i)
          if (!a[i] && (best < 0 || p[i] > p[best])) best = i;
        a[best] = true;
      }
      double gate_sum = 0;
      for (std::int64_t i = 0; i < N; ++i)
        if (a[i]) gate_sum += (g[i] = p[i]);
      const double alpha = scaling ? static_cast<double>(N) * gate_sum : 1.0;
      for (std::int64_t i = 0; i < N; ++i) w[i] = static_cast<float>(g[i] * alpha);
    }
  });
  return r;
}

}  // namespace moxlab
