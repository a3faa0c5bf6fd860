#include "kernels/fused/attention_training.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/fused/float_vectors.h"
#include "kernels/fused/packed_matmul.h"
#include "kernels/runtime/cpu_features.h"
#include "kernels/runtime/row_parallel.h"

namespace moxlab {

namespace {

using namespace simd;

constexpr std::int64_t kPanel = 16;
// Causal queries in chunks of this many rows: each chunk multiplies the keys up to its last row only.
constexpr std::int64_t kQueryChunk = 64;

// One (batch, head) operand: row t at data + t * stride.
struct HeadRows {
  float* data;
  std::int64_t stride;
  const float* row(std::int64_t t) const { return data + t * stride; }
};

HeadRows head_rows(const torch::Tensor& x, std::int64_t b, std::int64_t h) {
  return {x.data_ptr<float>() + b * x.stride(0) + h * x.stride(1), x.stride(2)};
}

// Rows [T, d] of a head as a weight's rows (output columns = rows): [ceil(T / 16), d, 16].
void pack_rows(const HeadRows& a, std::int64_t rows, std::int64_t d, std::vector<float>& out) {
  const std::int64_t panels = (rows + kPanel - 1) / kPanel;
  out.assign(static_cast<std::size_t>(panels * d * kPanel), 0.0f);
  for (std::int64_t t = 0; t < rows; ++t) {
    const float* src = a.row(t);
    float* dst = out.data() + (t / kPanel) * d * kPanel + t % kPanel;
    for (std::int64_t c = 0; c < d; ++c) dst[c * kPanel] = src[c];
  }
}

// Columns of a head's rows [T, d] as a weight's rows (output columns = d): [ceil(d / 16), T, 16].
void pack_columns(const HeadRows& a, std::int64_t rows, std::int64_t d, std::vector<float>& out) {
  const std::int64_t panels = (d + kPanel - 1) / kPanel;
  out.assign(static_cast<std::size_t>(panels * rows * kPanel), 0.0f);
  for (std::int64_t t = 0; t < rows; ++t) {
    const float* src = a.row(t);
    for (std::int64_t p = 0; p < panels; ++p) {
      const std::int64_t c0 = p * kPanel, w = std::min(kPanel, d - c0);
      std::copy(src + c0, src + c0 + w, out.data() + (p * rows + t) * kPanel);
    }
  }
}

PackedWeight weight(const std::vector<float>& packed, std::int64_t k, std::int64_t n) {
  PackedWeight w;
  w.panels = packed.data();
  w.k = k;
  w.n = n;
  return w;
}

// A [n, n] square's transpose.
void transpose(const float* a, std::int64_t n, float* out) {
  constexpr std::int64_t kBlock = 32;
  for (std::int64_t i0 = 0; i0 < n; i0 += kBlock)
    for (std::int64_t j0 = 0; j0 < n; j0 += kBlock)
      for (std::int64_t i = i0; i < std::min(n, i0 + kBlock); ++i)
        for (std::int64_t j = j0; j < std::min(n, j0 + kBlock); ++j) out[j * n + i] = a[i * n + j];
}

// softmax(scale s[0 .. keys)) in place, zeros from there up to width. Unlike the inference kernel's rows
// (attention.cpp), these are rows of the kept [T, T] probabilities with nothing past width, so the tail
// goes one value at a time rather than as a whole vector.
template <class F>
MOXLAB_INLINE void softmax_row(float* s, std::int64_t keys, std::int64_t width, float scale) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::int64_t j = 0; j < keys; ++j) m = std::max(m, s[j]);
  normalise_row<F>(s, keys, exp_shifted_row<F>(s, s, keys, m, scale));
  std::fill(s + keys, s + width, 0.0f);
}

// dS = scale P o (dP - sum_j P dP) over keys [0, keys) in place of dP; zeros from there up to width.
template <class F>
MOXLAB_INLINE void softmax_grad_row(const float* p, float* dp, std::int64_t keys, std::int64_t width, float scale) {
  constexpr int W = kLanes<F>;
  F acc{};
  std::int64_t j = 0;
  for (; j + W <= keys; j += W) acc += loadv<F>(p + j) * loadv<F>(dp + j);
  float dot = lane_sum(acc);
  for (; j < keys; ++j) dot += p[j] * dp[j];
  const F d = splatv<F>(dot), sc = splatv<F>(scale);
  for (j = 0; j + W <= keys; j += W) storev(dp + j, loadv<F>(p + j) * (loadv<F>(dp + j) - d) * sc);
  for (; j < keys; ++j) dp[j] = p[j] * (dp[j] - dot) * scale;
  std::fill(dp + keys, dp + width, 0.0f);
}

using SoftmaxFn = void (*)(float*, std::int64_t, std::int64_t, float);
using SoftmaxGradFn = void (*)(const float*, float*, std::int64_t, std::int64_t, float);
void softmax_portable(float* s, std::int64_t k, std::int64_t w, float sc) { softmax_row<f8>(s, k, w, sc); }
MOXLAB_TARGET_AVX2 void softmax_avx2(float* s, std::int64_t k, std::int64_t w, float sc) { softmax_row<f8>(s, k, w, sc); }
MOXLAB_TARGET_AVX512 void softmax_avx512(float* s, std::int64_t k, std::int64_t w, float sc) { softmax_row<f16>(s, k, w, sc); }
void softmax_grad_portable(const float* p, float* dp, std::int64_t k, std::int64_t w, float sc) { softmax_grad_row<f8>(p, dp, k, w, sc); }
MOXLAB_TARGET_AVX2 void softmax_grad_avx2(const float* p, float* dp, std::int64_t k, std::int64_t w, float sc) {
  softmax_grad_row<f8>(p, dp, k, w, sc);
}
MOXLAB_TARGET_AVX512 void softmax_grad_avx512(const float* p, float* dp, std::int64_t k, std::int64_t w, float sc) {
  softmax_grad_row<f16>(p, dp, k, w, sc);
}

// The query rows [r0, r1) of a pass: causal ones see keys up to r1 - 1 (each row up to itself).
struct Chunk {
  std::int64_t r0, r1, keys;
};
std::vector<Chunk> chunks(std::int64_t T, bool causal) {
  std::vector<Chunk> out;
  if (!causal) return {{0, T, T}};
  for (std::int64_t r0 = 0; r0 < T; r0 += kQueryChunk) out.push_back({r0, std::min(T, r0 + kQueryChunk), std::min(T, r0 + kQueryChunk)});
  return out;
}

// [B, heads, T, d] as the view of a new contiguous [B, T, heads, d].
torch::Tensor head_major_output(std::int64_t B, std::int64_t heads, std::int64_t T, std::int64_t d, const torch::TensorOptions& o) {
  return torch::empty({B, T, heads, d}, o).transpose(1, 2);
}

}  // namespace

bool attention_training_applies(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const auto f32_cpu = [](const torch::Tensor& t) {
    return t.is_cpu() && t.scalar_type() == torch::kFloat && t.dim() == 4 && (t.size(3) <= 1 || t.stride(3) == 1);
  };
  return f32_cpu(q) && f32_cpu(k) && f32_cpu(v) && q.size(0) == k.size(0) && k.size(0) == v.size(0) && k.size(1) == v.size(1) &&
         k.size(1) > 0 && q.size(1) % k.size(1) == 0 && q.size(2) == k.size(2) && k.size(2) == v.size(2) && q.size(3) == k.size(3) &&
         q.numel() > 0;
}

AttentionForward attention_training_forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                            double scale) {
  TORCH_CHECK(attention_training_applies(q, k, v), "training attention: needs float32 CPU q, k, v [B, heads, T, d] of one T");
  const auto B = q.size(0), H = q.size(1), T = q.size(2), Hkv = k.size(1), hq = q.size(3), hd = v.size(3), group = H / Hkv;
  AttentionForward f{head_major_output(B, H, T, hd, q.options()), torch::empty({B, H, T, T}, q.options())};
  const SoftmaxFn softmax = isa_variant<SoftmaxFn>(softmax_portable, softmax_avx2, softmax_avx512);
  const auto parts = chunks(T, causal);
  parallel_row_ranges(B * Hkv, 1, [&](std::int64_t i0, std::int64_t i1) {
    std::vector<float> kp, vp;
    for (std::int64_t i = i0; i < i1; ++i) {
      const std::int64_t b = i / Hkv, g = i % Hkv;
      pack_rows(head_rows(k, b, g), T, hq, kp);     // S = Q K^T: K's rows are the output columns
      pack_columns(head_rows(v, b, g), T, hd, vp);  // O = P V: V's columns are
      for (std::int64_t h = g * group; h < (g + 1) * group; ++h) {
        const HeadRows qh = head_rows(q, b, h), oh = head_rows(f.out, b, h);
        float* p = f.probs.data_ptr<float>() + (b * H + h) * T * T;
        for (const Chunk& c : parts) {
          const std::int64_t m = c.r1 - c.r0;
          packed_matmul({qh.data + c.r0 * qh.stride, qh.stride, nullptr}, m, weight(kp, hq, c.keys), {p + c.r0 * T, T, nullptr});
          for (std::int64_t r = c.r0; r < c.r1; ++r) softmax(p + r * T, causal ? r + 1 : T, T, static_cast<float>(scale));
          ProductOptions keys;
          keys.ranges = {{0, c.keys}};
          packed_matmul({p + c.r0 * T, T, nullptr}, m, weight(vp, T, hd), {oh.data + c.r0 * oh.stride, oh.stride, nullptr}, keys);
        }
      }
    }
  });
  return f;
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> attention_training_backward(const torch::Tensor& q, const torch::Tensor& k,
                                                                                    const torch::Tensor& v,
                                                                                    const torch::Tensor& probs,
                                                                                    const torch::Tensor& d_out_in, bool causal,
                                                                                    double scale) {
  TORCH_CHECK(attention_training_applies(q, k, v), "training attention: needs float32 CPU q, k, v [B, heads, T, d] of one T");
  const auto B = q.size(0), H = q.size(1), T = q.size(2), Hkv = k.size(1), hq = q.size(3), hd = v.size(3), group = H / Hkv;
  TORCH_CHECK(probs.is_contiguous() && probs.sizes() == torch::IntArrayRef({B, H, T, T}), "training attention: probabilities must be [B, H, T, T]");
  const auto d_out = d_out_in.stride(3) == 1 ? d_out_in : d_out_in.contiguous();
  TORCH_CHECK(d_out.sizes() == torch::IntArrayRef({B, H, T, hd}), "training attention: d_out must be [B, H, T, hd]");
  auto dq = head_major_output(B, H, T, hq, q.options());
  auto dk = head_major_output(B, Hkv, T, hq, q.options());
  auto dv = head_major_output(B, Hkv, T, hd, q.options());
  const SoftmaxGradFn softmax_grad = isa_variant<SoftmaxGradFn>(softmax_grad_portable, softmax_grad_avx2, softmax_grad_avx512);
  const auto parts = chunks(T, causal);
  parallel_row_ranges(B * Hkv, 1, [&](std::int64_t i0, std::int64_t i1) {
    std::vector<float> vr, kc, qc, oc, ds(static_cast<std::size_t>(T * T)), pt(static_cast<std::size_t>(T * T)),
        dst(static_cast<std::size_t>(T * T));
    for (std::int64_t i = i0; i < i1; ++i) {
      const std::int64_t b = i / Hkv, g = i % Hkv;
      pack_rows(head_rows(v, b, g), T, hd, vr);     // dP = dO V^T
      pack_columns(head_rows(k, b, g), T, hq, kc);  // dQ = dS K
      const HeadRows dkh = head_rows(dk, b, g), dvh = head_rows(dv, b, g);
      for (std::int64_t h = g * group; h < (g + 1) * group; ++h) {
        const HeadRows qh = head_rows(q, b, h), doh = head_rows(d_out, b, h), dqh = head_rows(dq, b, h);
        float* p = probs.data_ptr<float>() + (b * H + h) * T * T;
        for (const Chunk& c : parts) {
          const std::int64_t m = c.r1 - c.r0;
          packed_matmul({doh.data + c.r0 * doh.stride, doh.stride, nullptr}, m, weight(vr, hd, c.keys), {ds.data() + c.r0 * T, T, nullptr});
          for (std::int64_t r = c.r0; r < c.r1; ++r)
            softmax_grad(p + r * T, ds.data() + r * T, causal ? r + 1 : T, T, static_cast<float>(scale));
          ProductOptions keys;
          keys.ranges = {{0, c.keys}};
          packed_matmul({ds.data() + c.r0 * T, T, nullptr}, m, weight(kc, T, hq), {dqh.data + c.r0 * dqh.stride, dqh.stride, nullptr}, keys);
        }
        // dK = dS^T Q and dV = P^T dO, accumulated over the group's heads: key j is seen by queries j ..
        // T - 1 when causal, so each chunk of keys reads the queries from its first on.
        transpose(ds.data(), T, dst.data());
        transpose(p, T, pt.data());
        pack_columns(qh, T, hq, qc);
        pack_columns(doh, T, hd, oc);
        for (const Chunk& c : parts) {
          ProductOptions opt;
          opt.accumulate = h > g * group;
          const std::int64_t first = causal ? c.r0 : 0;
          opt.ranges = {{first, T - first}};
          const std::int64_t m = c.r1 - c.r0;
          packed_matmul({dst.data() + c.r0 * T, T, nullptr}, m, weight(qc, T, hq), {dkh.data + c.r0 * dkh.stride, dkh.stride, nullptr}, opt);
          packed_matmul({pt.data() + c.r0 * T, T, nullptr}, m, weight(oc, T, hd), {dvh.data + c.r0 * dvh.stride, dvh.stride, nullptr}, opt);
        }
      }
    }
  });
  return {dq, dk, dv};
}

}  // namespace moxlab
