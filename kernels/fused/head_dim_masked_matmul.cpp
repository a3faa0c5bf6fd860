#include "kernels/fused/head_dim_masked_matmul.h"

#include <algorithm>
#include <vector>

#include "kernels/fused/float_vectors.h"

namespace moxlab {

namespace {

using namespace simd;

constexpr int kPanel = 16;  // output columns per panel, as pack_weight lays them out
constexpr int kMaxTileRows = 8;
// Rows whose outputs every dim's pass reads and writes before the next chunk: 256 rows of d 384 are 384 KiB,
// which stay in L2 with the weight (576 KiB at d 384). Fewer rows mean more, shorter passes over the
// weight and more partial tiles; more push the outputs out of L2.
constexpr std::int64_t kRowChunk = 256;

// One dim's pass over a chunk: its rows (those keeping it) in register tiles, times its H columns.
struct DimPass {
  const RowMap* x = nullptr;
  const RowMap* out = nullptr;
  const std::int64_t* rows = nullptr;  // the rows keeping the dim
  std::int64_t count = 0;
  const float* panels = nullptr;  // the packing at (this dim, head 0) of panel 0
  std::int64_t panel_stride = 0;  // floats from one panel to the next
  std::int64_t whole_panels = 0;  // panels of 16 output columns; a partial last one has `tail` columns
  int tail = 0;
  std::int64_t head_stride = 0;  // hd: x's floats from one head's value of the dim to the next
  std::int64_t dim = 0;
  int heads = 0;
  const float* zero_row = nullptr;  // x of the rows that pad a tile: zeros at every head's dim
};

// MR rows x NP panels of accumulators: they start from the rows' outputs and end there (each dim adds its
// part, K = H per pass). F: 16 floats (one AVX-512 register per panel) or 8 (two per panel: AVX2, SSE).
// Whole panels only: a branch per accumulator for a partial one made GCC spill them.
template <class F, int MR, int NP, int U>
MOXLAB_INLINE void dim_tile(const float* const* x, float* const* out, const float* panel, std::int64_t panel_stride,
                            std::int64_t head_stride, int heads) {
  constexpr int V = kPanel / kLanes<F>;
  F acc[MR][NP][V];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int j = 0; j < NP; ++j)
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[r][j][v] = loadv<F>(out[r] + j * kPanel + v * kLanes<F>);
  for (int h0 = 0; h0 < heads; h0 += U)
#pragma GCC unroll 8
    for (int h = h0; h < h0 + U; ++h) {
      F w[NP][V];
#pragma GCC unroll 3
      for (int j = 0; j < NP; ++j)
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) w[j][v] = loadv<F>(panel + j * panel_stride + h * kPanel + v * kLanes<F>);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const F a = splatv<F>(x[r][h * head_stride]);
#pragma GCC unroll 3
        for (int j = 0; j < NP; ++j)
#pragma GCC unroll 2
          for (int v = 0; v < V; ++v) acc[r][j][v] += a * w[j][v];
      }
    }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int j = 0; j < NP; ++j)
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) storev(out[r] + j * kPanel + v * kLanes<F>, acc[r][j][v]);
}

// R rows' outputs y plus one dim's part: whole panels in groups of NP, then one at a time, then a partial
// last panel through a buffer.
template <class F, int R, int NP, int U>
MOXLAB_INLINE void rows_pass(const DimPass& p, const float* const* x, float* const* y) {
  float* out[R];
  float buffer[R][kPanel];
  std::int64_t q = 0;
  for (; q + NP <= p.whole_panels; q += NP) {
    for (int r = 0; r < R; ++r) out[r] = y[r] + q * kPanel;
    dim_tile<F, R, NP, U>(x, out, p.panels + q * p.panel_stride, p.panel_stride, p.head_stride, p.heads);
  }
  for (; q < p.whole_panels; ++q) {
    for (int r = 0; r < R; ++r) out[r] = y[r] + q * kPanel;
    dim_tile<F, R, 1, U>(x, out, p.panels + q * p.panel_stride, p.panel_stride, p.head_stride, p.heads);
  }
  if (p.tail > 0) {
    for (int r = 0; r < R; ++r) out[r] = std::copy(y[r] + q * kPanel, y[r] + q * kPanel + p.tail, buffer[r]) - p.tail;
    dim_tile<F, R, 1, U>(x, out, p.panels + q * p.panel_stride, p.panel_stride, p.head_stride, p.heads);
    for (int r = 0; r < R; ++r) std::copy(buffer[r], buffer[r] + p.tail, y[r] + q * kPanel);
  }
}

// A dim's pass, all in one function per ISA so the tiles inline (a call per tile cost a fifth of the time).
// Tiles of MR rows; a last tile of at least MR / 2 rows is padded with rows of zeros writing to scratch
// rows, fewer rows (a decode step's one) go one at a time.
template <class F, int MR, int NP, int U>
MOXLAB_INLINE void dim_pass(const DimPass& p, float* scratch) {
  const float* x[MR];
  float* y[MR];
  std::int64_t i0 = 0;
  for (; i0 < p.count && 2 * (p.count - i0) >= MR; i0 += MR) {
    for (int r = 0; r < MR; ++r) {
      const bool real = i0 + r < p.count;
      x[r] = real ? p.x->row(p.rows[i0 + r]) + p.dim : p.zero_row;
      y[r] = real ? p.out->row(p.rows[i0 + r]) : scratch + r * (p.whole_panels + 1) * kPanel;
    }
    rows_pass<F, MR, NP, U>(p, x, y);
  }
  for (; i0 < p.count; ++i0) {
    x[0] = p.x->row(p.rows[i0]) + p.dim;
    y[0] = p.out->row(p.rows[i0]);
    rows_pass<F, 1, NP, U>(p, x, y);
  }
}

// The heads loop unrolled by 8 or 4 where H allows: a loop over the heads measured markedly slower
// (docs/decisions/2026-11-26-tomoe-masked-wo.md).
template <class F, int MR, int NP>
MOXLAB_INLINE void dim_pass_any_heads(const DimPass& p, float* scratch) {
  if (p.heads % 8 == 0) dim_pass<F, MR, NP, 8>(p, scratch);
  else if (p.heads % 4 == 0) dim_pass<F, MR, NP, 4>(p, scratch);
  else dim_pass<F, MR, NP, 1>(p, scratch);
}

// AVX-512: 8 rows x 3 panels (24 accumulators, 3 weights and a broadcast in 32 registers); AVX2 and the
// portable loop: 6 rows x 1 panel (12 accumulators of 8 floats in 16 registers).
constexpr int kAvx512Rows = 8, kOtherRows = 6;
void pass_portable(const DimPass& p, float* scratch) { dim_pass_any_heads<f8, kOtherRows, 1>(p, scratch); }
MOXLAB_TARGET_AVX2 void pass_avx2(const DimPass& p, float* scratch) {
  dim_pass_any_heads<f8, kOtherRows, 1>(p, scratch);
}
MOXLAB_TARGET_AVX512 void pass_avx512(const DimPass& p, float* scratch) {
  dim_pass_any_heads<f16, kAvx512Rows, 3>(p, scratch);
}

}  // namespace

torch::Tensor pack_head_dim_major(const torch::Tensor& w, std::int64_t heads) {
  TORCH_CHECK(w.dim() == 2 && heads > 0 && w.size(1) % heads == 0, "pack_head_dim_major: ", w.size(1),
              " input columns are not whole heads of ", heads);
  const auto n = w.size(0), hd = w.size(1) / heads;
  return pack_weight(w.reshape({n, heads, hd}).transpose(1, 2).reshape({n, heads * hd}));
}

void head_dim_masked_matmul(const RowMap& x, std::int64_t m, const PackedWeight& w, std::int64_t heads, const float* mask,
                            std::int64_t mask_stride, const RowMap& out) {
  TORCH_CHECK(!w.swiglu && heads > 0 && w.k % heads == 0, "head_dim_masked_matmul: the weight's ", w.k,
              " input columns are not whole heads of ", heads);
  const std::int64_t hd = w.k / heads;
  const auto pass = isa_variant(pass_portable, pass_avx2, pass_avx512);
  DimPass p;
  p.x = &x;
  p.out = &out;
  p.panel_stride = w.k * kPanel;
  p.whole_panels = w.n / kPanel;
  p.tail = static_cast<int>(w.n % kPanel);
  p.head_stride = hd;
  p.heads = static_cast<int>(heads);
  const std::vector<float> zeros(static_cast<std::size_t>(w.k), 0.0f);
  std::vector<float> scratch(static_cast<std::size_t>(kMaxTileRows * (p.whole_panels + 1) * kPanel));
  p.zero_row = zeros.data();
  // Each chunk's rows listed by the dims they keep: rows_of[first[d] .. first[d + 1]).
  const std::int64_t chunk_rows = std::min(m, kRowChunk);
  std::vector<std::int64_t> first(static_cast<std::size_t>(hd) + 1), next(static_cast<std::size_t>(hd)), rows_of;
  std::vector<std::int32_t> kept(static_cast<std::size_t>(chunk_rows * (hd + 1))), count(static_cast<std::size_t>(chunk_rows));
  rows_of.reserve(static_cast<std::size_t>(chunk_rows * hd));
  for (std::int64_t m0 = 0; m0 < m; m0 += kRowChunk) {
    const std::int64_t m1 = std::min(m, m0 + kRowChunk);
    // Each row's kept dims listed without a branch per dim (a kept dim is a coin flip: the branches
    // mispredicted about half the time), then the rows counted by dim.
    std::fill(first.begin(), first.end(), 0);
    for (std::int64_t r = m0; r < m1; ++r) {
      std::fill(out.row(r), out.row(r) + w.n, 0.0f);
      const float* keep = mask + r * mask_stride;
      std::int32_t* dims = kept.data() + (r - m0) * (hd + 1);
      std::int32_t n = 0;
      for (std::int32_t d = 0; d < hd; ++d) {
        dims[n] = d;
        n += keep[d] != 0.0f;
      }
      count[static_cast<std::size_t>(r - m0)] = n;
      for (std::int32_t i = 0; i < n; ++i) ++first[static_cast<std::size_t>(dims[i]) + 1];
    }
    for (std::int64_t d = 0; d < hd; ++d) first[d + 1] += first[d];
    rows_of.resize(static_cast<std::size_t>(first[hd]));
    std::copy(first.begin(), first.end() - 1, next.begin());
    for (std::int64_t r = m0; r < m1; ++r) {
      const std::int32_t* dims = kept.data() + (r - m0) * (hd + 1);
      for (std::int32_t i = 0; i < count[static_cast<std::size_t>(r - m0)]; ++i) rows_of[static_cast<std::size_t>(next[dims[i]]++)] = r;
    }
    for (std::int64_t d = 0; d < hd; ++d) {
      p.dim = d;
      p.rows = rows_of.data() + first[d];
      p.count = first[d + 1] - first[d];
      p.panels = w.panels + d * heads * kPanel;
      pass(p, scratch.data());
    }
  }
}

}  // namespace moxlab
