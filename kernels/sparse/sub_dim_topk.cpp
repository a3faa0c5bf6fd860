#include "kernels/sparse/sub_dim_topk.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/fused/vec8.h"

namespace moxlab {

namespace {

using namespace vec8;

// One row's routing from its logits z[N] (Eq. 11-12 and the scaling); p, g, w, a: the row's outputs.
void route_row(const float* z, std::int64_t N, int shared, int routed, bool scaling, float* p, float* g, float* w, bool* a) {
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

// z[n] = x . phi_n for n < N (the centroid scores), over wt = phi^T padded to n_pad (a multiple of 8)
// columns: 8 scores per vector, four partial sums along d for independent multiply-add chains.
__attribute__((target_clones("arch=x86-64-v3", "default")))
void centroid_scores(const float* x, std::int64_t d, const float* wt, std::int64_t n_pad, float* z) {
  for (std::int64_t c = 0; c < n_pad; c += 8) {
    f8 acc[4] = {};
    std::int64_t i = 0;
    for (; i + 4 <= d; i += 4)
      for (int u = 0; u < 4; ++u) acc[u] += splat(x[i + u]) * load8(wt + (i + u) * n_pad + c);
    for (; i < d; ++i) acc[0] += splat(x[i]) * load8(wt + i * n_pad + c);
    store8(z + c, (acc[0] + acc[1]) + (acc[2] + acc[3]));
  }
}

SubDimTopK empty_routing(std::int64_t M, std::int64_t N) {
  return {torch::empty({M, N}), torch::zeros({M, N}, torch::kBool), torch::zeros({M, N}), torch::zeros({M, N})};
}

}  // namespace

SubDimTopK sub_dim_top_k(const torch::Tensor& logits, int shared, int routed, bool scaling) {
  TORCH_CHECK(logits.dim() == 2 && logits.is_cpu() && logits.scalar_type() == torch::kFloat, "sub-dim top-k: [M, N] float32 CPU logits");
  const std::int64_t M = logits.size(0), N = logits.size(1);
  TORCH_CHECK(shared >= 0 && routed >= 0 && shared + routed <= N, "sub-dim top-k: shared + routed exceeds N");
  const auto x = logits.contiguous();
  SubDimTopK r = empty_routing(M, N);
  const float* xp = x.data_ptr<float>();
  float *pp = r.probs.data_ptr<float>(), *gp = r.gates.data_ptr<float>(), *wp = r.weights.data_ptr<float>();
  bool* ap = r.active.data_ptr<bool>();
  at::parallel_for(0, M, 128, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t m = begin; m < end; ++m)
      route_row(xp + m * N, N, shared, routed, scaling, pp + m * N, gp + m * N, wp + m * N, ap + m * N);
  });
  return r;
}

bool sub_dim_route_fusable(const torch::Tensor& x, const torch::Tensor& centroids) {
  return !torch::GradMode::is_enabled() && x.is_cpu() && x.scalar_type() == torch::kFloat && x.is_contiguous() && x.dim() >= 1 &&
         centroids.is_cpu() && centroids.scalar_type() == torch::kFloat && centroids.dim() == 2 && centroids.size(1) == x.size(-1);
}

SubDimTopK sub_dim_route(const torch::Tensor& x, const torch::Tensor& centroids, int shared, int routed, bool scaling) {
  TORCH_CHECK(sub_dim_route_fusable(x, centroids), "sub-dim route: contiguous float32 CPU x [.., d], centroids [N, d], no autograd");
  const std::int64_t d = x.size(-1), N = centroids.size(0), M = d > 0 ? x.numel() / d : 0, n_pad = (N + 7) / 8 * 8;
  TORCH_CHECK(shared >= 0 && routed >= 0 && shared + routed <= N, "sub-dim route: shared + routed exceeds N");
  auto wt = torch::zeros({d, n_pad});
  wt.narrow(1, 0, N).copy_(centroids.t());
  SubDimTopK r = empty_routing(M, N);
  const float *xp = x.data_ptr<float>(), *wtp = wt.data_ptr<float>();
  float *pp = r.probs.data_ptr<float>(), *gp = r.gates.data_ptr<float>(), *wp = r.weights.data_ptr<float>();
  bool* ap = r.active.data_ptr<bool>();
  at::parallel_for(0, M, 64, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> z(static_cast<std::size_t>(n_pad));
    for (std::int64_t m = begin; m < end; ++m) {
      centroid_scores(xp + m * d, d, wtp, n_pad, z.data());
      route_row(z.data(), N, shared, routed, scaling, pp + m * N, gp + m * N, wp + m * N, ap + m * N);
    }
  });
  return r;
}

}  // namespace moxlab
