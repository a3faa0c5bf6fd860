#include "kernels/fused/swiglu.h"

#include "kernels/fused/float_vectors.h"

#include <ATen/Parallel.h>

#include <algorithm>

namespace moxlab {

namespace {

using namespace simd;

MOXLAB_INLINE void swiglu_row(float* g, const float* u, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) store8(g + j, silu_times(load8(g + j), load8(u + j)));
  if (j < n) {  // the tail through padded copies
    float gt[8] = {}, ut[8] = {};
    for (std::int64_t l = j; l < n; ++l) gt[l - j] = g[l], ut[l - j] = u[l];
    const f8 y = silu_times(load8(gt), load8(ut));
    for (std::int64_t l = j; l < n; ++l) g[l] = y[l - j];
  }
}

using RowFn = void (*)(float*, const float*, std::int64_t);
void swiglu_row_portable(float* g, const float* u, std::int64_t n) { swiglu_row(g, u, n); }
MOXLAB_TARGET_AVX2 void swiglu_row_avx2(float* g, const float* u, std::int64_t n) { swiglu_row(g, u, n); }

// SwiGLU's training passes over one row: forward a = SiLU(g) u into `a`; backward, with s = sigmoid(g),
// du = da SiLU(g) and dg = da u s (1 + g (1 - s)) (SiLU's derivative), in one pass. Whole vectors of F,
// the tail through padded copies.
template <class F>
MOXLAB_INLINE void swiglu_forward_row(const float* g, const float* u, float* a, std::int64_t n) {
  constexpr int W = kLanes<F>;
  std::int64_t j = 0;
  for (; j + W <= n; j += W) storev(a + j, silu_timesv(loadv<F>(g + j), loadv<F>(u + j)));
  if (j < n) {
    float gt[W] = {}, ut[W] = {}, at[W];
    std::copy(g + j, g + n, gt);
    std::copy(u + j, u + n, ut);
    storev(at, silu_timesv(loadv<F>(gt), loadv<F>(ut)));
    std::copy(at, at + (n - j), a + j);
  }
}

template <class F>
MOXLAB_INLINE void swiglu_backward_vector(F da, F g, F u, F& dg, F& du) {
  const F s = sigmoidv(g), one = splatv<F>(1.0f);
  du = da * g * s;
  dg = da * u * s * (one + g * (one - s));
}

template <class F>
MOXLAB_INLINE void swiglu_backward_row(const float* da, const float* g, const float* u, float* dg, float* du, std::int64_t n) {
  constexpr int W = kLanes<F>;
  std::int64_t j = 0;
  F dgv, duv;
  for (; j + W <= n; j += W) {
    swiglu_backward_vector(loadv<F>(da + j), loadv<F>(g + j), loadv<F>(u + j), dgv, duv);
    storev(dg + j, dgv);
    storev(du + j, duv);
  }
  if (j < n) {
    float dat[W] = {}, gt[W] = {}, ut[W] = {}, dgt[W], dut[W];
    std::copy(da + j, da + n, dat);
    std::copy(g + j, g + n, gt);
    std::copy(u + j, u + n, ut);
    swiglu_backward_vector(loadv<F>(dat), loadv<F>(gt), loadv<F>(ut), dgv, duv);
    storev(dgt, dgv);
    storev(dut, duv);
    std::copy(dgt, dgt + (n - j), dg + j);
    std::copy(dut, dut + (n - j), du + j);
  }
}

// Rows [r0, r1) of the training passes: row r of gate / up at r * gs / r * us, of the rest at r * n.
using ForwardRowsFn = void (*)(const float*, std::int64_t, const float*, std::int64_t, float*, std::int64_t, std::int64_t, std::int64_t);
using BackwardRowsFn = void (*)(const float*, const float*, std::int64_t, const float*, std::int64_t, float*, float*, std::int64_t,
                                std::int64_t, std::int64_t);
template <class F>
MOXLAB_INLINE void forward_rows(const float* g, std::int64_t gs, const float* u, std::int64_t us, float* a, std::int64_t r0, std::int64_t r1,
                                std::int64_t n) {
  for (std::int64_t r = r0; r < r1; ++r) swiglu_forward_row<F>(g + r * gs, u + r * us, a + r * n, n);
}
template <class F>
MOXLAB_INLINE void backward_rows(const float* da, const float* g, std::int64_t gs, const float* u, std::int64_t us, float* dg, float* du,
                                 std::int64_t r0, std::int64_t r1, std::int64_t n) {
  for (std::int64_t r = r0; r < r1; ++r) swiglu_backward_row<F>(da + r * n, g + r * gs, u + r * us, dg + r * n, du + r * n, n);
}
void forward_portable(const float* g, std::int64_t gs, const float* u, std::int64_t us, float* a, std::int64_t r0, std::int64_t r1,
                      std::int64_t n) {
  forward_rows<f8>(g, gs, u, us, a, r0, r1, n);
}
MOXLAB_TARGET_AVX2 void forward_avx2(const float* g, std::int64_t gs, const float* u, std::int64_t us, float* a, std::int64_t r0,
                                     std::int64_t r1, std::int64_t n) {
  forward_rows<f8>(g, gs, u, us, a, r0, r1, n);
}
MOXLAB_TARGET_AVX512 void forward_avx512(const float* g, std::int64_t gs, const float* u, std::int64_t us, float* a, std::int64_t r0,
                                         std::int64_t r1, std::int64_t n) {
  forward_rows<f16>(g, gs, u, us, a, r0, r1, n);
}
void backward_portable(const float* da, const float* g, std::int64_t gs, const float* u, std::int64_t us, float* dg, float* du,
                       std::int64_t r0, std::int64_t r1, std::int64_t n) {
  backward_rows<f8>(da, g, gs, u, us, dg, du, r0, r1, n);
}
MOXLAB_TARGET_AVX2 void backward_avx2(const float* da, const float* g, std::int64_t gs, const float* u, std::int64_t us, float* dg,
                                      float* du, std::int64_t r0, std::int64_t r1, std::int64_t n) {
  backward_rows<f8>(da, g, gs, u, us, dg, du, r0, r1, n);
}
MOXLAB_TARGET_AVX512 void backward_avx512(const float* da, const float* g, std::int64_t gs, const float* u, std::int64_t us, float* dg,
                                          float* du, std::int64_t r0, std::int64_t r1, std::int64_t n) {
  backward_rows<f16>(da, g, gs, u, us, dg, du, r0, r1, n);
}

// Rows of one stride: contiguous, or [rows, n] with contiguous rows (a column slice of a wider product).
bool rows_of_one_stride(const torch::Tensor& t) {
  return t.is_contiguous() || (t.dim() == 2 && (t.size(1) <= 1 || t.stride(1) == 1));
}

}  // namespace

bool swiglu_training_fits(const torch::Tensor& gate, const torch::Tensor& up) {
  return gate.is_cpu() && up.is_cpu() && gate.scalar_type() == torch::kFloat &&
         up.scalar_type() == torch::kFloat && gate.dim() >= 1 && gate.sizes() == up.sizes() && rows_of_one_stride(gate) &&
         rows_of_one_stride(up);
}

bool swiglu_fusable(const torch::Tensor& gate, const torch::Tensor& up) {
  return !torch::GradMode::is_enabled() && swiglu_training_fits(gate, up);
}

torch::Tensor swiglu_inference(torch::Tensor gate, const torch::Tensor& up) {
  TORCH_CHECK(swiglu_fusable(gate, up), "fused SwiGLU: needs float32 CPU gate and up of one shape with contiguous rows, no autograd");
  const std::int64_t n = gate.size(-1), rows = n > 0 ? gate.numel() / n : 0;
  const std::int64_t gs = gate.is_contiguous() ? n : gate.stride(0), us = up.is_contiguous() ? n : up.stride(0);
  float* gp = gate.data_ptr<float>();
  const float* up_p = up.data_ptr<float>();
  const RowFn row = isa_variant<RowFn>(swiglu_row_portable, swiglu_row_avx2, swiglu_row_avx2);
  at::parallel_for(0, rows, 16, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) row(gp + r * gs, up_p + r * us, n);
  });
  return gate;
}

namespace {

// The row count, width and row strides of gate and up (swiglu_training_fits).
struct SwigluRows {
  std::int64_t rows, n, gs, us;
};
SwigluRows swiglu_rows(const torch::Tensor& gate, const torch::Tensor& up) {
  const std::int64_t n = gate.size(-1), rows = n > 0 ? gate.numel() / n : 0;
  return {rows, n, gate.is_contiguous() ? n : gate.stride(0), up.is_contiguous() ? n : up.stride(0)};
}

}  // namespace

torch::Tensor swiglu_training_forward(const torch::Tensor& gate, const torch::Tensor& up) {
  TORCH_CHECK(swiglu_training_fits(gate, up), "fused SwiGLU (training): needs float32 CPU gate and up of one shape with contiguous rows");
  const auto s = swiglu_rows(gate, up);
  auto a = torch::empty(gate.sizes(), gate.options());
  const auto f = isa_variant<ForwardRowsFn>(forward_portable, forward_avx2, forward_avx512);
  at::parallel_for(0, s.rows, 16, [&](std::int64_t r0, std::int64_t r1) {
    f(gate.data_ptr<float>(), s.gs, up.data_ptr<float>(), s.us, a.data_ptr<float>(), r0, r1, s.n);
  });
  return a;
}

std::pair<torch::Tensor, torch::Tensor> swiglu_backward(const torch::Tensor& da, const torch::Tensor& gate, const torch::Tensor& up) {
  TORCH_CHECK(swiglu_training_fits(gate, up) && da.sizes() == gate.sizes() && da.is_contiguous() && da.scalar_type() == torch::kFloat,
              "fused SwiGLU backward: needs contiguous float32 da and gate / up of its shape with contiguous rows");
  const auto s = swiglu_rows(gate, up);
  auto dg = torch::empty(gate.sizes(), gate.options()), du = torch::empty(gate.sizes(), gate.options());
  const auto f = isa_variant<BackwardRowsFn>(backward_portable, backward_avx2, backward_avx512);
  at::parallel_for(0, s.rows, 16, [&](std::int64_t r0, std::int64_t r1) {
    f(da.data_ptr<float>(), gate.data_ptr<float>(), s.gs, up.data_ptr<float>(), s.us, dg.data_ptr<float>(), du.data_ptr<float>(), r0, r1,
      s.n);
  });
  return {dg, du};
}

}  // namespace moxlab
