#include "kernels/sparse/sub_dim_topk.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/fused/packed_matmul.h"
#include "kernels/sparse/top_k_mask.h"

namespace moxlab {

namespace {

// One row's routing from its logits z[N] (Eq. 11-12 and the scaling); p, g, w, a: the row's outputs.
void route_row(const float* z, std::int64_t N, int shared, int routed, GateScaling scaling, float* p, float* g, float* w, bool* a) {
  float top = z[0];
  for (std::int64_t i = 1; i < N; ++i) top = std::max(top, z[i]);
  float sum = 0;
  for (std::int64_t i = 0; i < N; ++i) sum += (p[i] = std::exp(z[i] - top));
  const float inv = 1.0f / sum;
  for (std::int64_t i = 0; i < N; ++i) p[i] *= inv;
  for (int i = 0; i < shared; ++i) a[i] = true;
  // The top `routed` of the specialised scores by top_k_mask's branch-free rank count (ties to the lower
  // index, as repeated argmax picks them), into g as a 0/1 mask first: the argmax loop's branches
  // mispredict when several of the routed blocks are picked (MoHD 75%'s 6 of 9).
  top_k_mask_rows(p + shared, 1, N - shared, routed, g + shared, 1);
  for (std::int64_t i = shared; i < N; ++i) a[i] = g[i] != 0.0f;
  double gate_sum = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    g[i] = a[i] ? p[i] : 0.0f;
    gate_sum += g[i];
  }
  const double alpha = gate_alpha(scaling, gate_sum, N, shared + routed);
  for (std::int64_t i = 0; i < N; ++i) w[i] = static_cast<float>(g[i] * alpha);
}

// The router input both inference forms take: contiguous float32 CPU x [.., d] without autograd.
bool route_input_fits(const torch::Tensor& x) {
  return !torch::GradMode::is_enabled() && x.is_cpu() && x.scalar_type() == torch::kFloat && x.is_contiguous() && x.dim() >= 1;
}

SubDimTopK empty_routing(std::int64_t M, std::int64_t N) {
  return {torch::empty({M, N}), torch::zeros({M, N}, torch::kBool), torch::zeros({M, N}), torch::zeros({M, N})};
}

}  // namespace

SubDimTopK sub_dim_top_k(const torch::Tensor& logits, int shared, int routed, GateScaling scaling) {
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
  return route_input_fits(x) && centroids.is_cpu() && centroids.scalar_type() == torch::kFloat && centroids.dim() == 2 && centroids.size(1) == x.size(-1);
}

SubDimTopK sub_dim_route(const torch::Tensor& x, const PackedWeight& phi, int shared, int routed, GateScaling scaling) {
  TORCH_CHECK(route_input_fits(x) && !phi.swiglu && phi.k == x.size(-1),
              "sub-dim route: contiguous float32 CPU x [.., d], centroids packed [N, d], no autograd");
  const std::int64_t d = x.size(-1), N = phi.n, M = d > 0 ? x.numel() / d : 0;
  TORCH_CHECK(shared >= 0 && routed >= 0 && shared + routed <= N, "sub-dim route: shared + routed exceeds N");
  // The centroid scores as a packed product (one 16-column panel for N <= 16) over each thread's rows,
  // then each row's routing from them.
  SubDimTopK r = empty_routing(M, N);
  float* xp = x.data_ptr<float>();
  float *pp = r.probs.data_ptr<float>(), *gp = r.gates.data_ptr<float>(), *wp = r.weights.data_ptr<float>();
  bool* ap = r.active.data_ptr<bool>();
  at::parallel_for(0, M, 64, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> z(static_cast<std::size_t>((end - begin) * N));
    packed_matmul({xp + begin * d, d}, end - begin, phi, {z.data(), N});
    for (std::int64_t m = begin; m < end; ++m)
      route_row(z.data() + (m - begin) * N, N, shared, routed, scaling, pp + m * N, gp + m * N, wp + m * N, ap + m * N);
  });
  return r;
}

}  // namespace moxlab
