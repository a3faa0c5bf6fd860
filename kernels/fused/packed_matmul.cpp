#include "kernels/fused/packed_matmul.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/runtime/huge_pages.h"
#include "kernels/fused/float_vectors.h"
#include "kernels/runtime/cpu_features.h"
#include "kernels/runtime/row_parallel.h"

namespace moxlab {

namespace {

using namespace simd;

constexpr int kPanel = 16;              // output columns per panel: two 8-float (one 16-float) registers
constexpr int kMaxTileRows = 8;         // rows per register tile: 6 with AVX2 (12 accumulators), 8 with AVX-512 (up to 24)
// Rows every panel passes over before the next chunk: as many as keep the chunk's inputs within about
// 384 KiB of L2, 96 to 192 rows. A ToMoE expert's ~128 rows per thread at the small shape then pass over its
// weights, which stream from memory, once rather than twice (96 + 32); K = 1024 and up keep 96 rows
// (docs/decisions/2026-11-26-packed-weight-products.md).
constexpr std::int64_t kMaxRowChunk = 192;
std::int64_t row_chunk(std::int64_t k) {
  constexpr std::int64_t kChunkFloats = 384 * 1024 / 4;
  return std::clamp<std::int64_t>(kChunkFloats / std::max<std::int64_t>(1, k), 96, kMaxRowChunk) / 8 * 8;
}

// Where one tile's results go and what happens to them on the way.
struct Epilogue {
  int columns = kPanel;  // valid output columns of this panel (16, or 8 for SwiGLU; fewer in the last panel)
  const float* bias = nullptr;  // 16 values, padded past the last column
  bool accumulate = false;
  bool swiglu = false;
};

// One row's 16 accumulated values (lo: columns 0-7, hi: 8-15) into its output row. Always inlined, so it is
// compiled for the ISA of the tile that calls it.
MOXLAB_INLINE void finish_row(f8 lo, f8 hi, float* out, const Epilogue& e) {
  if (e.swiglu) {  // lo = x G^T, hi = x U^T for the same 8 channels
    const f8 y = silu_times(lo, hi);
    if (e.columns == 8) return store8(out, y);
    for (int c = 0; c < e.columns; ++c) out[c] = y[c];
    return;
  }
  if (e.bias) {
    lo += load8(e.bias);
    hi += load8(e.bias + 8);
  }
  if (e.columns == kPanel) {
    if (e.accumulate) {
      lo += load8(out);
      hi += load8(out + 8);
    }
    store8(out, lo);
    store8(out + 8, hi);
    return;
  }
  float v[kPanel];
  store8(v, lo);
  store8(v + 8, hi);
  for (int c = 0; c < e.columns; ++c) out[c] = e.accumulate ? out[c] + v[c] : v[c];
}

struct Tile {
  const float* const* x = nullptr;  // the rows' inputs (column 0)
  float* const* out = nullptr;      // the rows' outputs (column 0)
  std::int64_t col = 0;             // the first panel's first output column
  std::int64_t panel_stride = 0;    // floats from one panel to the next
  int out_step = 0;                 // output columns from one panel to the next
  const char* prefetch = nullptr;   // AVX-512: lines to prefetch, one per k step, while the tile runs
  std::int64_t prefetch_lines = 0;
};

// A tile of `rows` rows over `panels` adjacent panels (1, or up to 3 with AVX-512), each with its epilogue.
using TileFn = void (*)(const Tile&, const float* panel, const KRange* ranges, std::size_t n_ranges, const Epilogue* e);

template <int MR>
void tile_portable(const Tile& t, const float* panel, const KRange* ranges, std::size_t n_ranges, const Epilogue* e) {
  float acc[MR][kPanel] = {};
  for (std::size_t i = 0; i < n_ranges; ++i)
    for (std::int64_t k = ranges[i].begin; k < ranges[i].begin + ranges[i].count; ++k) {
      const float* b = panel + k * kPanel;
      for (int r = 0; r < MR; ++r) {
        const float a = t.x[r][k];
        for (int c = 0; c < kPanel; ++c) acc[r][c] += a * b[c];
      }
    }
  for (int r = 0; r < MR; ++r) finish_row(load8(acc[r]), load8(acc[r] + 8), t.out[r] + t.col, *e);
}

#if defined(__x86_64__)
// The AVX2 register tile: per k, the panel's 16 weights in two registers, each row's x broadcast and
// multiply-added into its two accumulators (12 FMAs per 8 loads; all accumulators stay in registers,
// hence the unrolled row loops).
template <int MR>
MOXLAB_TARGET_AVX2 void tile_avx2(const Tile& t, const float* panel, const KRange* ranges, std::size_t n_ranges,
                                                   const Epilogue* e) {
  __m256 lo[MR], hi[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
  for (std::size_t i = 0; i < n_ranges; ++i) {
    const float* b = panel + ranges[i].begin * kPanel;
    const float* x[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) x[r] = t.x[r] + ranges[i].begin;
    for (std::int64_t k = 0; k < ranges[i].count; ++k, b += kPanel) {
      const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m256 a = _mm256_broadcast_ss(x[r] + k);
        lo[r] = _mm256_fmadd_ps(a, b0, lo[r]);
        hi[r] = _mm256_fmadd_ps(a, b1, hi[r]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) finish_row((f8)lo[r], (f8)hi[r], t.out[r] + t.col, *e);
}

// The AVX-512 register tile: a panel's 16 weights per k in one register, NP panels side by side, each
// row's x broadcast into NP multiply-adds (8 rows x 3 panels: 24 FMAs per 11 loads, 28 of 32 registers). A CPU whose 512-bit
// multiply-adds run at full width (AMD Zen 5, Intel server cores) does twice the AVX2 work per cycle.
template <int MR, int NP>
MOXLAB_TARGET_AVX512 void tile_avx512(const Tile& t, const float* panel, const KRange* ranges,
                                                                         std::size_t n_ranges, const Epilogue* e) {
  __m512 acc[MR][NP];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 3
    for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_ps();
  const char* pf = t.prefetch;
  std::int64_t pf_left = t.prefetch_lines;
  for (std::size_t i = 0; i < n_ranges; ++i) {
    const float* b = panel + ranges[i].begin * kPanel;
    const float* x[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) x[r] = t.x[r] + ranges[i].begin;
    for (std::int64_t k = 0; k < ranges[i].count; ++k, b += kPanel) {
      if (pf_left > 0) {
        __builtin_prefetch(pf, 0, 2);
        pf += 64;
        --pf_left;
      }
      __m512 w[NP];
#pragma GCC unroll 3
      for (int j = 0; j < NP; ++j) w[j] = _mm512_loadu_ps(b + j * t.panel_stride);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m512 a = _mm512_set1_ps(x[r][k]);
#pragma GCC unroll 3
        for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_fmadd_ps(a, w[j], acc[r][j]);
      }
    }
  }
  float v[kPanel];  // through memory: GCC 12 warns on its own headers' 512 -> 256-bit extracts
#pragma GCC unroll 3
  for (int j = 0; j < NP; ++j) {
    int r = 0;
    if (e[j].swiglu && e[j].columns == 8) {
      // SwiGLU on 16 lanes: two rows' gates (each accumulator's low half) against their ups (high half),
      // half the exponentials and divisions of one row at a time.
      const i16 lows = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
      const i16 highs = lows + 8;
#pragma GCC unroll 4
      for (; r + 1 < MR; r += 2) {
        const f16 a = (f16)acc[r][j], b = (f16)acc[r + 1][j];
        storev(v, silu_timesv(__builtin_shuffle(a, b, lows), __builtin_shuffle(a, b, highs)));
        store8(t.out[r] + t.col + j * t.out_step, load8(v));
        store8(t.out[r + 1] + t.col + j * t.out_step, load8(v + 8));
      }
    }
#pragma GCC unroll 8
    for (; r < MR; ++r) {
      _mm512_storeu_ps(v, acc[r][j]);
      finish_row(load8(v), load8(v + 8), t.out[r] + t.col + j * t.out_step, e[j]);
    }
  }
}

constexpr TileFn kAvx2Tiles[kMaxTileRows + 1] = {nullptr,      tile_avx2<1>, tile_avx2<2>, tile_avx2<3>,
                                                 tile_avx2<4>, tile_avx2<5>, tile_avx2<6>};
constexpr TileFn kAvx512Tiles[3][kMaxTileRows + 1] = {
    {nullptr, tile_avx512<1, 1>, tile_avx512<2, 1>, tile_avx512<3, 1>, tile_avx512<4, 1>, tile_avx512<5, 1>, tile_avx512<6, 1>,
     tile_avx512<7, 1>, tile_avx512<8, 1>},
    {nullptr, tile_avx512<1, 2>, tile_avx512<2, 2>, tile_avx512<3, 2>, tile_avx512<4, 2>, tile_avx512<5, 2>, tile_avx512<6, 2>,
     tile_avx512<7, 2>, tile_avx512<8, 2>},
    {nullptr, tile_avx512<1, 3>, tile_avx512<2, 3>, tile_avx512<3, 3>, tile_avx512<4, 3>, tile_avx512<5, 3>, tile_avx512<6, 3>,
     tile_avx512<7, 3>, tile_avx512<8, 3>}};
#else
constexpr TileFn kAvx2Tiles[kMaxTileRows + 1] = {};
constexpr TileFn kAvx512Tiles[3][kMaxTileRows + 1] = {};
#endif

constexpr TileFn kPortableTiles[kMaxTileRows + 1] = {nullptr,          tile_portable<1>, tile_portable<2>, tile_portable<3>,
                                                     tile_portable<4>, tile_portable<5>, tile_portable<6>};

void check_packing_input(const torch::Tensor& w, const char* what) {
  TORCH_CHECK(w.dim() == 2 && w.scalar_type() == torch::kFloat && w.is_cpu(), what, ": needs a float32 CPU matrix");
}

}  // namespace

torch::Tensor pack_weight(const torch::Tensor& w) {
  check_packing_input(w, "pack_weight");
  const auto n = w.size(0), k = w.size(1), panels = (n + kPanel - 1) / kPanel;
  auto padded = torch::zeros({panels * kPanel, k}, w.options());
  padded.narrow(0, 0, n).copy_(w);
  return copy_to_huge_pages(padded.view({panels, kPanel, k}).transpose(1, 2));
}

torch::Tensor pack_swiglu_weight(const torch::Tensor& gate, const torch::Tensor& up) {
  check_packing_input(gate, "pack_swiglu_weight");
  TORCH_CHECK(gate.sizes() == up.sizes(), "pack_swiglu_weight: gate and up differ in shape");
  const auto width = gate.size(0), k = gate.size(1), panels = (width + 7) / 8;
  auto padded = torch::zeros({2, panels * 8, k}, gate.options());
  padded[0].narrow(0, 0, width).copy_(gate);
  padded[1].narrow(0, 0, width).copy_(up);
  // [2, panels, 8, K] -> [panels, 2, 8, K] -> [panels, K, 16]: gate's 8 columns, then up's.
  return copy_to_huge_pages(padded.view({2, panels, 8, k}).permute({1, 3, 0, 2}).reshape({panels, k, kPanel}));
}

torch::Tensor pack_transposed(const torch::Tensor& a) {
  check_packing_input(a, "pack_transposed");
  const auto src = a.contiguous();
  const auto m = src.size(0), n = src.size(1), panels = (n + kPanel - 1) / kPanel;
  auto packed = torch::empty({panels, m, kPanel}, src.options());
  const float* in = src.data_ptr<float>();
  float* out = packed.data_ptr<float>();
  // Row by row: each row's n floats read once, written as 16-float runs into every panel.
  parallel_row_ranges(m, 256, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      const float* row = in + r * n;
      for (std::int64_t p = 0; p < panels; ++p) {
        float* dst = out + (p * m + r) * kPanel;
        const std::int64_t c0 = p * kPanel, width = std::min<std::int64_t>(kPanel, n - c0);
        if (width == kPanel) {
          std::copy(row + c0, row + c0 + kPanel, dst);
        } else {
          std::copy(row + c0, row + c0 + width, dst);
          std::fill(dst + width, dst + kPanel, 0.0f);
        }
      }
    }
  });
  return packed;
}

torch::Tensor pack_weight_blocks(const torch::Tensor& w, std::int64_t b) {
  check_packing_input(w, "pack_weight_blocks");
  TORCH_CHECK(b > 0 && w.size(0) % b == 0, "pack_weight_blocks: ", w.size(0), " rows are not whole blocks of ", b);
  const auto blocks = w.size(0) / b, k = w.size(1), panels = (b + kPanel - 1) / kPanel;
  auto padded = torch::zeros({blocks, panels * kPanel, k}, w.options());
  padded.narrow(1, 0, b).copy_(w.reshape({blocks, b, k}));
  return copy_to_huge_pages(padded.view({blocks, panels, kPanel, k}).transpose(2, 3));
}

RowMap row_map(const torch::Tensor& t, const std::int64_t* index) {
  TORCH_CHECK(t.dim() == 2 && t.scalar_type() == torch::kFloat && (t.size(1) <= 1 || t.stride(1) == 1),
              "row_map: needs a float32 matrix with contiguous rows");
  return {t.data_ptr<float>(), t.stride(0), index};
}

PackedWeight packed_weight(const torch::Tensor& packed, std::int64_t n, bool swiglu) {
  TORCH_CHECK(packed.dim() == 3 && packed.size(2) == kPanel && packed.is_contiguous() && packed.scalar_type() == torch::kFloat,
              "packed_weight: not a packed weight [panels, K, 16]");
  PackedWeight w{packed, packed.data_ptr<float>(), packed.size(1), n, swiglu};
  TORCH_CHECK(n >= 0 && w.panel_count() == packed.size(0), "packed_weight: ", n, " columns do not match ", packed.size(0),
              " panels");
  return w;
}

PackedWeight packed_block(const torch::Tensor& packed_blocks, std::int64_t i, std::int64_t b) {
  TORCH_CHECK(packed_blocks.dim() == 4 && packed_blocks.size(3) == kPanel && packed_blocks.is_contiguous() &&
                  packed_blocks.scalar_type() == torch::kFloat && packed_blocks.size(1) == (b + kPanel - 1) / kPanel &&
                  i >= 0 && i < packed_blocks.size(0),
              "packed_block: not block ", i, " of a block packing of ", b, " rows");
  const auto k = packed_blocks.size(2);
  return {packed_blocks, packed_blocks.data_ptr<float>() + i * packed_blocks.size(1) * k * kPanel, k, b, false};
}

void packed_matmul(const RowMap& x, std::int64_t m, const PackedWeight& w, const RowMap& out, const ProductOptions& opt) {
  TORCH_CHECK(!w.swiglu || (opt.bias == nullptr && !opt.accumulate), "packed_matmul: SwiGLU takes no bias or accumulation");
  // The caller's input ranges, or all of K (no copy: this runs per product, many times per layer).
  const KRange whole{0, w.k};
  const KRange* ranges = opt.ranges.empty() ? &whole : opt.ranges.data();
  const std::size_t n_ranges = opt.ranges.empty() ? 1 : opt.ranges.size();
  for (const KRange& r : opt.ranges)
    TORCH_CHECK(r.begin >= 0 && r.count >= 0 && r.begin + r.count <= w.k, "packed_matmul: input range outside K = ", w.k);
  TORCH_CHECK(!opt.row_blocks || (opt.ranges.empty() && opt.block_width > 0 && w.k % opt.block_width == 0 && w.k / opt.block_width <= 64),
              "packed_matmul: row blocks need no ranges and at most 64 blocks dividing K");
  const Isa isa = active_isa();
  const int tile_rows = isa == Isa::avx512 ? 8 : 6, tile_panels = isa == Isa::avx512 ? 3 : 1;
  const int per_panel = w.swiglu ? 8 : kPanel;  // output columns per panel
  const std::int64_t panel_floats = w.k * kPanel;
  const float* x_rows[kMaxRowChunk];
  float* out_rows[kMaxRowChunk];
  const std::int64_t chunk = row_chunk(w.k);
  // With row blocks: each register tile's ranges, the union of its rows' blocks with adjacent ones merged.
  std::vector<std::vector<KRange>> tile_ranges;
  for (std::int64_t m0 = 0; m0 < m; m0 += chunk) {
    const std::int64_t m1 = std::min(m, m0 + chunk);
    for (std::int64_t r = m0; r < m1; ++r) {
      x_rows[r - m0] = x.row(r);
      out_rows[r - m0] = out.row(r);
    }
    if (opt.row_blocks) {
      tile_ranges.resize(static_cast<std::size_t>((m1 - m0 + tile_rows - 1) / tile_rows));
      for (std::int64_t r0 = m0; r0 < m1; r0 += tile_rows) {
        std::uint64_t used = 0;
        for (std::int64_t r = r0; r < std::min(m1, r0 + tile_rows); ++r) used |= opt.row_blocks[r];
        auto& tr = tile_ranges[static_cast<std::size_t>((r0 - m0) / tile_rows)];
        tr.clear();
        for (std::int64_t i = 0; used != 0; ++i, used >>= 1) {
          if (!(used & 1)) continue;
          if (!tr.empty() && tr.back().begin + tr.back().count == i * opt.block_width) tr.back().count += opt.block_width;
          else tr.push_back({i * opt.block_width, opt.block_width});
        }
      }
    }
    for (std::int64_t p = 0; p < w.panel_count();) {
      const int panels = static_cast<int>(std::min<std::int64_t>(tile_panels, w.panel_count() - p));
      const TileFn* tiles = isa == Isa::avx512 ? kAvx512Tiles[panels - 1] : isa == Isa::avx2 ? kAvx2Tiles : kPortableTiles;
      Epilogue e[3];
      float bias[3][kPanel] = {};
      for (int j = 0; j < panels; ++j) {
        const std::int64_t col = (p + j) * per_panel;
        e[j].columns = static_cast<int>(std::min<std::int64_t>(per_panel, w.n - col));
        e[j].accumulate = opt.accumulate;
        e[j].swiglu = w.swiglu;
        if (opt.bias) {
          std::copy(opt.bias + col, opt.bias + col + e[j].columns, bias[j]);
          e[j].bias = bias[j];
        }
      }
      const float* panel = w.panels + p * panel_floats;
      // The next panels into the cache a slice per tile, so they are there when these are done: the
      // weights of a sparse layer's experts do not all stay in L3 across a forward. The AVX2 tile's slice
      // goes out in a burst before the tile; the AVX-512 tile issues its slice one line per k step into L2,
      // as a burst there stalls its loads (docs/decisions/2026-11-26-packed-weight-products.md).
      const char* next = reinterpret_cast<const char*>(panel + panels * panel_floats);
      const std::int64_t next_panels = std::min<std::int64_t>(tile_panels, w.panel_count() - p - panels);
      const std::int64_t next_bytes = next_panels * panel_floats * static_cast<std::int64_t>(sizeof(float));
      const std::int64_t tiles_here = (m1 - m0 + tile_rows - 1) / tile_rows;
      const std::int64_t slice = (next_bytes / tiles_here + 63) / 64 * 64;
      std::int64_t fetched = 0;
      Tile t;
      t.col = p * per_panel;
      t.panel_stride = panel_floats;
      t.out_step = per_panel;
      for (std::int64_t r0 = m0; r0 < m1; r0 += tile_rows) {
        const int rows = static_cast<int>(std::min<std::int64_t>(tile_rows, m1 - r0));
        if (isa == Isa::avx512) {
          const std::int64_t end = std::min(next_bytes, fetched + slice);
          t.prefetch = next + fetched;
          t.prefetch_lines = (end - fetched) / 64;
          fetched = end;
        } else {
          for (const std::int64_t end = std::min(next_bytes, fetched + slice); fetched < end; fetched += 64) __builtin_prefetch(next + fetched);
        }
        t.x = x_rows + (r0 - m0);
        t.out = out_rows + (r0 - m0);
        if (opt.row_blocks) {
          const auto& tr = tile_ranges[static_cast<std::size_t>((r0 - m0) / tile_rows)];
          tiles[rows](t, panel, tr.data(), tr.size(), e);
        } else {
          tiles[rows](t, panel, ranges, n_ranges, e);
        }
      }
      p += panels;
    }
  }
}

bool packed_applies(const torch::Tensor& x) {
  return !torch::GradMode::is_enabled() && x.is_cpu() && x.scalar_type() == torch::kFloat;
}

// Where rows are too few to split, panels per thread at least (two AVX-512 tiles wide).
constexpr std::int64_t kColumnGrainPanels = 6;

void parallel_panel_parts(const PackedWeight& w, const std::function<void(const PackedWeight&, std::int64_t)>& f) {
  const std::int64_t per_panel = w.swiglu ? 8 : kPanel;
  parallel_row_ranges(w.panel_count(), kColumnGrainPanels, [&](std::int64_t p0, std::int64_t p1) {
    PackedWeight part = w;
    part.panels = w.panels + p0 * w.k * kPanel;
    part.n = std::min(w.n, p1 * per_panel) - p0 * per_panel;
    f(part, p0 * per_panel);
  });
}

void parallel_packed_matmul(const RowMap& x, std::int64_t m, const PackedWeight& w, const RowMap& out, const ProductOptions& opt) {
  if (m > kRowGrain) {
    parallel_row_ranges(m, kRowGrain, [&](std::int64_t a, std::int64_t e) {
      ProductOptions o = opt;
      if (o.row_blocks) o.row_blocks += a;
      packed_matmul(x.from(a), e - a, w, out.from(a), o);
    });
    return;
  }
  // Too few rows to split (a decode step, the prompt's last positions through the output head): the weight
  // streams from memory once for all of them, so the threads split its panels instead and every core
  // streams its share (docs/decisions/2026-11-26-decode-panel-split.md).
  parallel_panel_parts(w, [&](const PackedWeight& part, std::int64_t column) {
    ProductOptions o = opt;
    if (o.bias) o.bias += column;
    packed_matmul(x, m, part, {out.data + column, out.stride, out.index}, o);
  });
}

torch::Tensor packed_linear(const torch::Tensor& x, const PackedWeight& w, const torch::Tensor& bias) {
  TORCH_CHECK(packed_applies(x) && x.size(-1) == w.k && !w.swiglu, "packed_linear: needs float32 CPU input [..., ", w.k,
              "] without autograd and a linear packing");
  const auto x2 = x.reshape({-1, w.k}).contiguous();
  const auto b = bias.defined() ? bias.contiguous() : bias;
  TORCH_CHECK(!b.defined() || (b.numel() == w.n && b.scalar_type() == torch::kFloat), "packed_linear: bias must be [", w.n, "]");
  auto y = torch::empty({x2.size(0), w.n}, x.options());
  ProductOptions opt;
  if (b.defined()) opt.bias = b.data_ptr<float>();
  parallel_packed_matmul(row_map(x2), x2.size(0), w, row_map(y), opt);
  auto shape = x.sizes().vec();
  shape.back() = w.n;
  return y.view(shape);
}

}  // namespace moxlab
