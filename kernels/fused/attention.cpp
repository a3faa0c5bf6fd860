#include "kernels/fused/attention.h"

#include "kernels/fused/float_vectors.h"
#include "kernels/runtime/cpu_features.h"

#include <omp.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace moxlab {

namespace {

using namespace simd;

// One query row: its queries, where its output goes, how many keys (from the first) it sees, the factor
// its output is multiplied by (MoH's gate; 1 otherwise) and, if any, per-dimension factors of its output
// (ToMoE's v/o mask).
struct QueryRow {
  const float* q;
  float* out;
  std::int64_t keys;
  float gate = 1.0f;
  const float* dim_scale = nullptr;
};

// The loops below are written once for a vector type F of W = kLanes<F> floats: f8 (AVX2, and the
// baseline ISA) and f16 (AVX-512, where the CPU has it and the value width is a multiple of 16).

// Scores of R rows against W NK keys: s[r][j] = q_r . k_j over the packed K^T (hq rows of ldk floats),
// R x NK accumulators in registers. Where every key of the tile is seen by every row (`seen`), the rows'
// running maxima take the tile's too, so the softmax needs no separate pass for them.
template <class F, int R, int NK>
MOXLAB_INLINE void score_tile(const QueryRow* rows, const float* kt, std::int64_t ldk, std::int64_t hq, float* s,
                              std::int64_t lds, bool seen, F* row_max) {
  constexpr int W = kLanes<F>;
  F acc[R][NK];
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < NK; ++n) acc[r][n] = F{};
  for (std::int64_t d = 0; d < hq; ++d) {
    F kd[NK];
    for (int n = 0; n < NK; ++n) kd[n] = loadv<F>(kt + d * ldk + W * n);
    for (int r = 0; r < R; ++r) {
      const F qd = splatv<F>(rows[r].q[d]);
      for (int n = 0; n < NK; ++n) acc[r][n] += qd * kd[n];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < NK; ++n) {
      storev(s + r * lds + W * n, acc[r][n]);
      if (seen) row_max[r] = acc[r][n] > row_max[r] ? acc[r][n] : row_max[r];
    }
}

// The row's first `keys` scores become exp(scale * (s - m)), the rest up to `width` zero, m their maximum;
// returns 1 / their sum. The last partial vector is computed whole and its lanes past the keys zeroed.
template <class F>
MOXLAB_INLINE float softmax_row(float* s, std::int64_t keys, std::int64_t width, float m, float scale) {
  constexpr int W = kLanes<F>;
  const F sc = splatv<F>(scale), shift = splatv<F>(scale * m);
  F sv{};
  std::int64_t j = 0;
  for (; j + W <= keys; j += W) {
    const F e = expv(loadv<F>(s + j) * sc - shift);
    storev(s + j, e);
    sv += e;
  }
  if (j < keys) {
    F lane;
    for (int l = 0; l < W; ++l) lane[l] = static_cast<float>(l);
    const F e = expv(loadv<F>(s + j) * sc - shift);
    const F kept = lane < splatv<F>(static_cast<float>(keys - j)) ? e : F{};
    storev(s + j, kept);
    sv += kept;
    j += W;
  }
  if (j < width) std::fill(s + j, s + width, 0.0f);
  return 1.0f / lane_sum(sv);
}

// out_r[c0 .. c0 + W NV) = inv_r * sum_j p_r[j] v_j: R rows x NV vectors of accumulators, each V row read
// once for the R rows.
template <class F, int R, int NV>
MOXLAB_INLINE void mix_tile(const float* p, std::int64_t lds, std::int64_t keys, const float* const* v, std::int64_t voff,
                            const QueryRow* rows, const float* inv, std::int64_t c0) {
  constexpr int W = kLanes<F>;
  F acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < NV; ++n) acc[r][n] = F{};
  for (std::int64_t j = 0; j < keys; ++j) {
    const float* vj = v[j] + voff + c0;
    for (int n = 0; n < NV; ++n) {
      const F vv = loadv<F>(vj + W * n);
      for (int r = 0; r < R; ++r) acc[r][n] += splatv<F>(p[r * lds + j]) * vv;
    }
  }
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < NV; ++n)
      storev(rows[r].out + c0 + W * n,
             rows[r].dim_scale ? acc[r][n] * inv[r] * loadv<F>(rows[r].dim_scale + c0 + W * n) : acc[r][n] * inv[r]);
}

// The value width in tiles of 48 dims (6 eight-float or 3 sixteen-float vectors per row), then the rest.
template <class F, int R>
MOXLAB_INLINE void mix_rows(const float* p, std::int64_t lds, std::int64_t keys, const float* const* v, std::int64_t voff,
                            std::int64_t hd, const QueryRow* rows, const float* inv) {
  constexpr int W = kLanes<F>, per_tile = 48 / W;
  for (std::int64_t c0 = 0; c0 < hd; c0 += 48) {
    switch (std::min<std::int64_t>(per_tile, (hd - c0) / W)) {
      case 6: mix_tile<F, R, 6>(p, lds, keys, v, voff, rows, inv, c0); break;
      case 5: mix_tile<F, R, 5>(p, lds, keys, v, voff, rows, inv, c0); break;
      case 4: mix_tile<F, R, 4>(p, lds, keys, v, voff, rows, inv, c0); break;
      case 3: mix_tile<F, R, 3>(p, lds, keys, v, voff, rows, inv, c0); break;
      case 2: mix_tile<F, R, 2>(p, lds, keys, v, voff, rows, inv, c0); break;
      default: mix_tile<F, R, 1>(p, lds, keys, v, voff, rows, inv, c0); break;
    }
  }
}

// R (1..4, or 8 with 16-float vectors) query rows of one key/value head: scores for the keys the last of
// them sees (tiles of 3 W keys, 2 W for eight rows, then W), softmax, mix. `s` holds R rows of lds floats (lds >= the keys rounded up to W; the packed
// K^T is zero beyond the keys).
template <class F, int R>
MOXLAB_INLINE void attend_block(const QueryRow* rows, const float* kt, std::int64_t ldk, std::int64_t hq, const float* const* v,
                                std::int64_t voff, std::int64_t hd, float scale, float* s, std::int64_t lds) {
  constexpr int W = kLanes<F>;
  std::int64_t keys = 0, seen_by_all = rows[0].keys;
  for (int r = 0; r < R; ++r) {
    keys = std::max(keys, rows[r].keys);
    seen_by_all = std::min(seen_by_all, rows[r].keys);
  }
  // Tiles wholly seen by every row fold into the running maxima: they cover keys [0, seen_prefix).
  F row_max[R];
  for (int r = 0; r < R; ++r) row_max[r] = splatv<F>(-std::numeric_limits<float>::infinity());
  std::int64_t j0 = 0, seen_prefix = 0;
  constexpr int NK = R > 4 ? 2 : 3;  // eight rows: 16 accumulators and 8 maxima in registers
  for (; j0 + NK * W <= keys; j0 += NK * W) {
    const bool seen = j0 + NK * W <= seen_by_all;
    score_tile<F, R, NK>(rows, kt + j0, ldk, hq, s + j0, lds, seen, row_max);
    if (seen) seen_prefix = j0 + NK * W;
  }
  for (; j0 < keys; j0 += W) {
    const bool seen = j0 + W <= seen_by_all;
    score_tile<F, R, 1>(rows, kt + j0, ldk, hq, s + j0, lds, seen, row_max);
    if (seen) seen_prefix = j0 + W;
  }
  float inv[R];
  for (int r = 0; r < R; ++r) {
    float m = -std::numeric_limits<float>::infinity();
    for (int l = 0; l < W; ++l) m = std::max(m, row_max[r][l]);
    for (std::int64_t j = seen_prefix; j < rows[r].keys; ++j) m = std::max(m, s[r * lds + j]);
    inv[r] = softmax_row<F>(s + r * lds, rows[r].keys, keys, m, scale) * rows[r].gate;
  }
  // The mix in pairs of rows with 8-float vectors (12 accumulators), all four or eight rows at once with
  // 16-float ones (3 vectors per row: 12 or 24 accumulators, enough multiply-adds in flight).
  if constexpr (W == 16 && (R == 4 || R == 8)) {
    mix_rows<F, R>(s, lds, keys, v, voff, hd, rows, inv);
  } else {
    int r0 = 0;
    for (; r0 + 2 <= R; r0 += 2)
      mix_rows<F, 2>(s + r0 * lds, lds, std::max(rows[r0].keys, rows[r0 + 1].keys), v, voff, hd, rows + r0, inv + r0);
    if (r0 < R) mix_rows<F, 1>(s + r0 * lds, lds, rows[r0].keys, v, voff, hd, rows + r0, inv + r0);
  }
}

template <class F>
MOXLAB_INLINE void attend_rows_of(const QueryRow* rows, std::int64_t n_rows, const float* kt, std::int64_t ldk, std::int64_t hq,
                                  const float* const* v, std::int64_t voff, std::int64_t hd, float scale, float* s, std::int64_t lds) {
  std::int64_t i = 0;
  // With 16-float vectors, blocks of eight rows (two positions of a group of four): each K^T and V row read
  // from L2 serves twice the rows, which pays off as the context grows.
  if constexpr (kLanes<F> == 16)
    for (; i + 8 <= n_rows; i += 8) attend_block<F, 8>(rows + i, kt, ldk, hq, v, voff, hd, scale, s, lds);
  for (; i + 4 <= n_rows; i += 4) attend_block<F, 4>(rows + i, kt, ldk, hq, v, voff, hd, scale, s, lds);
  switch (n_rows - i) {
    case 3: attend_block<F, 3>(rows + i, kt, ldk, hq, v, voff, hd, scale, s, lds); break;
    case 2: attend_block<F, 2>(rows + i, kt, ldk, hq, v, voff, hd, scale, s, lds); break;
    case 1: attend_block<F, 1>(rows + i, kt, ldk, hq, v, voff, hd, scale, s, lds); break;
    default: break;
  }
}

using AttendFn = void (*)(const QueryRow*, std::int64_t, const float*, std::int64_t, std::int64_t, const float* const*, std::int64_t,
                          std::int64_t, float, float*, std::int64_t);
void attend_rows_portable(const QueryRow* rows, std::int64_t n_rows, const float* kt, std::int64_t ldk, std::int64_t hq,
                          const float* const* v, std::int64_t voff, std::int64_t hd, float scale, float* s, std::int64_t lds) {
  attend_rows_of<f8>(rows, n_rows, kt, ldk, hq, v, voff, hd, scale, s, lds);
}
MOXLAB_TARGET_AVX2 void attend_rows_avx2(const QueryRow* rows, std::int64_t n_rows, const float* kt, std::int64_t ldk, std::int64_t hq,
                                         const float* const* v, std::int64_t voff, std::int64_t hd, float scale, float* s,
                                         std::int64_t lds) {
  attend_rows_of<f8>(rows, n_rows, kt, ldk, hq, v, voff, hd, scale, s, lds);
}
// Sixteen-float vectors: twice the work per multiply-add where the CPU runs 512-bit FMAs at full width.
MOXLAB_TARGET_AVX512 void attend_rows_avx512(const QueryRow* rows, std::int64_t n_rows, const float* kt, std::int64_t ldk,
                                             std::int64_t hq, const float* const* v, std::int64_t voff, std::int64_t hd, float scale,
                                             float* s, std::int64_t lds) {
  attend_rows_of<f16>(rows, n_rows, kt, ldk, hq, v, voff, hd, scale, s, lds);
}

// kt[d][j] = key j's value d (key j at k[j] + off), columns Tk .. ldk - 1 zero: 8 x 8 blocks transposed in
// registers (three rounds of shuffles), the edges one value at a time.
MOXLAB_INLINE void pack_keys(const float* const* k, std::int64_t off, std::int64_t Tk, std::int64_t hq, float* kt, std::int64_t ldk) {
  const std::int64_t j_full = Tk / 8 * 8, d_full = hq / 8 * 8;
  for (std::int64_t j0 = 0; j0 < j_full; j0 += 8) {
    for (std::int64_t d0 = 0; d0 < d_full; d0 += 8) {
      f8 r[8];
      for (int i = 0; i < 8; ++i) r[i] = load8(k[j0 + i] + off + d0);
      f8 t[8], u[8];
      for (int i = 0; i < 8; i += 2) {  // pairs of rows interleaved
        t[i] = __builtin_shuffle(r[i], r[i + 1], i8{0, 8, 1, 9, 4, 12, 5, 13});
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], i8{2, 10, 3, 11, 6, 14, 7, 15});
      }
      for (int i = 0; i < 8; i += 4) {  // quadruples: u[i + c] holds columns c and c + 4 of four rows
        u[i + 0] = __builtin_shuffle(t[i], t[i + 2], i8{0, 1, 8, 9, 4, 5, 12, 13});
        u[i + 1] = __builtin_shuffle(t[i], t[i + 2], i8{2, 3, 10, 11, 6, 7, 14, 15});
        u[i + 2] = __builtin_shuffle(t[i + 1], t[i + 3], i8{0, 1, 8, 9, 4, 5, 12, 13});
        u[i + 3] = __builtin_shuffle(t[i + 1], t[i + 3], i8{2, 3, 10, 11, 6, 7, 14, 15});
      }
      for (int c = 0; c < 4; ++c) {  // halves of the two quadruples: columns c and c + 4 of all eight rows
        store8(kt + (d0 + c) * ldk + j0, __builtin_shuffle(u[c], u[c + 4], i8{0, 1, 2, 3, 8, 9, 10, 11}));
        store8(kt + (d0 + c + 4) * ldk + j0, __builtin_shuffle(u[c], u[c + 4], i8{4, 5, 6, 7, 12, 13, 14, 15}));
      }
    }
    for (std::int64_t d = d_full; d < hq; ++d)
      for (std::int64_t j = j0; j < j0 + 8; ++j) kt[d * ldk + j] = k[j][off + d];
  }
  for (std::int64_t d = 0; d < hq; ++d) {
    for (std::int64_t j = j_full; j < Tk; ++j) kt[d * ldk + j] = k[j][off + d];
    std::fill(kt + d * ldk + Tk, kt + (d + 1) * ldk, 0.0f);
  }
}

using PackKeysFn = void (*)(const float* const*, std::int64_t, std::int64_t, std::int64_t, float*, std::int64_t);
void pack_keys_portable(const float* const* k, std::int64_t off, std::int64_t Tk, std::int64_t hq, float* kt, std::int64_t ldk) {
  pack_keys(k, off, Tk, hq, kt, ldk);
}
MOXLAB_TARGET_AVX2 void pack_keys_avx2(const float* const* k, std::int64_t off, std::int64_t Tk, std::int64_t hq, float* kt,
                                       std::int64_t ldk) {
  pack_keys(k, off, Tk, hq, kt, ldk);
}

float exp_one_portable(float x) { return exp8(splat(x))[0]; }
MOXLAB_TARGET_AVX2 float exp_one_avx2(float x) { return exp8(splat(x))[0]; }

// Query positions per work item: an item is (batch, key/value head, this many positions x the group's
// query heads); a thread runs whole pairs' items in order, or, where the threads do not divide the pairs,
// the items (of unequal causal work) are handed out dynamically.
constexpr std::int64_t kPositionsPerItem = 16;

// Where every operand row is: row (b, t) of the queries / outputs and row (b, j) of the keys / values
// (b-major tables), each holding its heads `*_head` floats apart.
struct RowTables {
  std::int64_t B, T, Tk, H, Hkv, hq, hd;
  std::vector<const float*> q, k, v;
  std::vector<float*> out;
  std::int64_t q_head, k_head, v_head, out_head;
  const float* gates = nullptr;  // [B * T, H] (b-major) or none: each (position, head)'s output factor
  const float* dim_scales = nullptr;  // [B * T, hd] (b-major) or none: each position's output dims' factors
};

void run_attention(const RowTables& L, bool causal, float scale) {
  const std::int64_t B = L.B, T = L.T, Tk = L.Tk, Hkv = L.Hkv, hq = L.hq, group = L.H / L.Hkv;
  // 16-float vectors where the kernel has AVX-512 and the value width takes them whole.
  const bool wide = L.hd % 16 == 0 && active_isa() == Isa::avx512;
  const std::int64_t lanes = wide ? 16 : 8;
  // K^T per (batch, key/value head), keys padded with zeros to a multiple of the lanes (the narrowest score tile).
  const std::int64_t ldk = (Tk + lanes - 1) / lanes * lanes;
  std::vector<float> kt(static_cast<std::size_t>(B * Hkv * hq * ldk));
  const PackKeysFn pack_keys = isa_variant<PackKeysFn>(pack_keys_portable, pack_keys_avx2, pack_keys_avx2);
  auto pack = [&](std::int64_t bg) { pack_keys(L.k.data() + bg / Hkv * Tk, bg % Hkv * L.k_head, Tk, hq, kt.data() + bg * hq * ldk, ldk); };
  const std::int64_t tiles = (T + kPositionsPerItem - 1) / kPositionsPerItem, pairs = B * Hkv;
  const auto past = Tk - T;
  const AttendFn attend = isa_variant<AttendFn>(attend_rows_portable, attend_rows_avx2, wide ? attend_rows_avx512 : attend_rows_avx2);
  // Item `tile` of the pair bg = (batch, key/value head): kPositionsPerItem positions x the group's query heads.
  auto run_item = [&](std::int64_t bg, std::int64_t tile, std::vector<QueryRow>& rows, std::vector<float>& scores) {
    const std::int64_t b = bg / Hkv, g = bg % Hkv, t0 = tile * kPositionsPerItem;
    const std::int64_t n = std::min(kPositionsPerItem, T - t0);
    // Position-major rows: the group's heads at one position see the same keys, so a block of four rows
    // wastes no score work when the group is a multiple of 4 (a block of eight, two positions, one key).
    // A head gated to 0 at a position (MoH: not selected there) is not computed, its output zero; the
    // selected ones fill the blocks, their positions a few apart.
    rows.clear();
    for (std::int64_t t = t0; t < t0 + n; ++t)
      for (std::int64_t h = g * group; h < (g + 1) * group; ++h) {
        float* out = L.out[b * T + t] + h * L.out_head;
        const float gate = L.gates ? L.gates[(b * T + t) * L.H + h] : 1.0f;
        if (gate == 0.0f) {
          std::fill(out, out + L.hd, 0.0f);
          continue;
        }
        rows.push_back({L.q[b * T + t] + h * L.q_head, out, causal ? past + t + 1 : Tk, gate,
                        L.dim_scales ? L.dim_scales + (b * T + t) * L.hd : nullptr});
      }
    attend(rows.data(), static_cast<std::int64_t>(rows.size()), kt.data() + bg * hq * ldk, ldk, hq, L.v.data() + b * Tk, g * L.v_head,
           L.hd, scale, scores.data(), ldk);
  };
  const int threads = at::get_num_threads();
  if (threads > 1 && pairs % threads == 0 && !omp_in_parallel()) {
    // Every pair holds the same causal work, so when the threads divide the pairs each takes its own run of
    // them whole (one region, nothing handed out): it packs their K^T and runs all their positions. With
    // whole batches per thread (B a multiple of the threads) a thread reads only the rows the row-parallel
    // products before it wrote on the same thread (they split the rows evenly, batch-major), and writes
    // only the rows W_O then reads there: no row crosses between the cores, which is what the machine's
    // slow phase (cores that share data slowly) makes expensive
    // (docs/decisions/2026-11-25-row-local-parallel-regions.md).
#pragma omp parallel num_threads(threads)
    {
      std::vector<QueryRow> rows;
      std::vector<float> scores(static_cast<std::size_t>(8 * ldk));
      // Contiguous shares of the team the runtime gave (all pairs covered even if it gave fewer threads).
      const std::int64_t team = omp_get_num_threads(), id = omp_get_thread_num();
      for (std::int64_t bg = pairs * id / team; bg < pairs * (id + 1) / team; ++bg) {
        pack(bg);
        for (std::int64_t tile = 0; tile < tiles; ++tile) run_item(bg, tile, rows, scores);
      }
    }
    return;
  }
  at::parallel_for(0, pairs, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t bg = begin; bg < end; ++bg) pack(bg);
  });
  const std::int64_t items = pairs * tiles;
  // Otherwise dynamic scheduling: causal items differ in work by up to T / kPositionsPerItem times.
#pragma omp parallel num_threads(threads) if (items > 1 && !omp_in_parallel())
  {
    std::vector<QueryRow> rows;
    std::vector<float> scores(static_cast<std::size_t>(8 * ldk));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t item = 0; item < items; ++item) run_item(item / tiles, item % tiles, rows, scores);
  }
}

}  // namespace

float attention_exp(float x) { return isa_variant(exp_one_portable, exp_one_avx2, exp_one_avx2)(x); }

bool attention_fusable(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const auto ok = [](const torch::Tensor& t) {
    return t.is_cpu() && t.scalar_type() == torch::kFloat && t.dim() == 4 && (t.size(3) <= 1 || t.stride(3) == 1);
  };
  return !torch::GradMode::is_enabled() && ok(q) && ok(k) && ok(v) && v.size(3) % 8 == 0 && v.size(3) > 0 && q.size(3) > 0 &&
         k.size(3) == q.size(3) && k.size(0) == q.size(0) && v.size(0) == q.size(0) && k.size(1) == v.size(1) &&
         k.size(2) == v.size(2) && k.size(1) > 0 && q.size(1) % k.size(1) == 0;
}

bool attention_gates_fit(const torch::Tensor& q, const torch::Tensor& gates) {
  return gates.is_cpu() && gates.scalar_type() == torch::kFloat && gates.is_contiguous() && gates.dim() == 3 &&
         gates.size(0) == q.size(0) && gates.size(1) == q.size(2) && gates.size(2) == q.size(1);
}

bool attention_dim_scales_fit(const torch::Tensor& q, const torch::Tensor& v, const torch::Tensor& dim_scales) {
  return dim_scales.is_cpu() && dim_scales.scalar_type() == torch::kFloat && dim_scales.is_contiguous() && dim_scales.dim() == 3 &&
         dim_scales.size(0) == q.size(0) && dim_scales.size(1) == q.size(2) && dim_scales.size(2) == v.size(3);
}

torch::Tensor attention_inference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                  double scale, const torch::Tensor& gates, const torch::Tensor& dim_scales) {
  TORCH_CHECK(attention_fusable(q, k, v), "fused attention: needs float32 CPU q/k/v [B, heads, T, d] with contiguous rows, "
                                          "matching shapes, a value width that is a multiple of 8 and no autograd");
  TORCH_CHECK(!gates.defined() || attention_gates_fit(q, gates), "fused attention: gates must be contiguous float32 [B, T, heads]");
  TORCH_CHECK(!dim_scales.defined() || attention_dim_scales_fit(q, v, dim_scales),
              "fused attention: dimension scales must be contiguous float32 [B, T, value width]");
  RowTables L{q.size(0), q.size(2), k.size(2), q.size(1), k.size(1), q.size(3), v.size(3), {}, {}, {}, {}, q.stride(1), k.stride(1),
              v.stride(1), v.size(3)};
  if (gates.defined()) L.gates = gates.data_ptr<float>();
  if (dim_scales.defined()) L.dim_scales = dim_scales.data_ptr<float>();
  TORCH_CHECK(!causal || L.Tk >= L.T, "fused attention: causal queries need their own keys");
  auto out = torch::empty({L.B, L.T, L.H, L.hd}, q.options());
  if (out.numel() == 0) return out.transpose(1, 2);
  const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
  float* op = out.data_ptr<float>();
  for (std::int64_t b = 0; b < L.B; ++b) {
    for (std::int64_t t = 0; t < L.T; ++t) {
      L.q.push_back(qp + b * q.stride(0) + t * q.stride(2));
      L.out.push_back(op + (b * L.T + t) * L.H * L.hd);
    }
    for (std::int64_t j = 0; j < L.Tk; ++j) {
      L.k.push_back(kp + b * k.stride(0) + j * k.stride(2));
      L.v.push_back(vp + b * v.stride(0) + j * v.stride(2));
    }
  }
  run_attention(L, causal, static_cast<float>(scale));
  return out.transpose(1, 2);
}

bool attention_rows_fusable(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const auto ok = [](const torch::Tensor& t) {
    return t.is_cpu() && t.scalar_type() == torch::kFloat && t.dim() == 3 && (t.size(2) <= 1 || t.stride(2) == 1);
  };
  return !torch::GradMode::is_enabled() && ok(q) && ok(k) && ok(v) && v.size(2) % 8 == 0 && v.size(2) > 0 && q.size(2) > 0 &&
         k.size(2) == q.size(2) && k.size(0) == q.size(0) && v.size(0) == q.size(0) && k.size(1) == v.size(1) && k.size(1) > 0 &&
         q.size(1) % k.size(1) == 0;
}

torch::Tensor attention_inference_rows(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                       const torch::Tensor& row_of_token, std::int64_t batch, bool causal, double scale) {
  TORCH_CHECK(attention_rows_fusable(q, k, v), "fused attention (rows): needs float32 CPU q/k/v [rows, heads, d] with contiguous "
                                               "heads, matching shapes, a value width that is a multiple of 8 and no autograd");
  const std::int64_t M = q.size(0);
  TORCH_CHECK(batch > 0 && M % batch == 0 && row_of_token.numel() == M && row_of_token.scalar_type() == torch::kLong,
              "fused attention (rows): row_of_token must map all batch x T tokens");
  RowTables L{batch, M / batch, M / batch, q.size(1), k.size(1), q.size(2), v.size(2), {}, {}, {}, {}, q.stride(1), k.stride(1),
              v.stride(1), v.size(2)};
  auto out = torch::empty({M, L.H * L.hd}, q.options());
  if (out.numel() == 0) return out;
  const auto map = row_of_token.to(torch::kCPU).contiguous();
  const std::int64_t* row = map.data_ptr<std::int64_t>();
  const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
  float* op = out.data_ptr<float>();
  for (std::int64_t i = 0; i < M; ++i) {
    TORCH_CHECK(row[i] >= 0 && row[i] < M, "fused attention (rows): row index out of range");
    L.q.push_back(qp + row[i] * q.stride(0));
    L.k.push_back(kp + row[i] * k.stride(0));
    L.v.push_back(vp + row[i] * v.stride(0));
    L.out.push_back(op + row[i] * L.H * L.hd);
  }
  run_attention(L, causal, static_cast<float>(scale));
  return out;
}

}  // namespace moxlab
