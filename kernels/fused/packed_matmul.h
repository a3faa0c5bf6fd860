// Inference products x W^T against weights packed once, instead of per call. OpenBLAS repacks the weight
// matrix on every call: for the row-local products of the sparse models (ToMoE's experts over ~130 rows,
// MoHD's routed blocks) that copy is a measurable share of a prefill (perf;
// docs/decisions/2026-11-26-packed-weight-products.md). Here W [N, K] is laid out once as panels of 16
// output columns, [ceil(N / 16), K, 16] (zero-padded), and a register-tiled kernel multiplies rows against
// them: 8 rows x 2 panels of accumulators with AVX-512, 6 rows x 1 panel with AVX2 + FMA, a portable loop
// elsewhere (`moxlab bench matmul` times them against torch::mm).
//
// What one pass can do besides the product, to save passes over the result:
//   - rows read and written through row indices (gather / scatter: ToMoE's expert dispatch);
//   - input ranges: only some runs of K (MoHD's active blocks), accumulated in registers;
//   - bias, accumulation into the output (+=), and SwiGLU: a weight packed by pack_swiglu_weight gives
//     SiLU(x G^T) * (x U^T) directly, the [rows, 2 width] gate/up product never written.
// Single-threaded by design: callers split rows across threads (parallel_row_ranges). CPU float32, no
// autograd (rows are raw pointers: callers keep their tensors alive).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <torch/torch.h>

namespace moxlab {

// W [N, K] float32 -> [ceil(N / 16), K, 16]: column c of panel p is row 16 p + c of W.
torch::Tensor pack_weight(const torch::Tensor& w);
// SwiGLU's gate and up [W, K] -> [ceil(W / 8), K, 16]: columns 0-7 of panel p are gate rows 8p .. 8p+7,
// columns 8-15 the same rows of up.
torch::Tensor pack_swiglu_weight(const torch::Tensor& gate, const torch::Tensor& up);

// pack_weight(a.t()) without the transposed copy: the columns of a row-major a [M, N] as panels,
// [ceil(N / 16), M, 16] (panel p, row m: a[m, 16 p .. 16 p + 15], zero-padded). The backward products'
// packings: W [N, K] for dX = dY W, the layer input X [M, K] for dW = dY^T X. Ordinary memory (a
// per-call packing of activations), filled by the threads.
torch::Tensor pack_transposed(const torch::Tensor& a);

// W [blocks * b, K] packed block by block, [blocks, ceil(b / 16), K, 16]: each run of b output rows its own
// packing (MoHD's output-side blocks, any b), and packed_block() the PackedWeight of block i.
torch::Tensor pack_weight_blocks(const torch::Tensor& w, std::int64_t b);

// Row r of a float32 matrix with contiguous rows: data + (index ? index[r] : r) * stride.
struct RowMap {
  float* data = nullptr;
  std::int64_t stride = 0;
  const std::int64_t* index = nullptr;
  float* row(std::int64_t r) const { return data + (index ? index[r] : r) * stride; }
  RowMap from(std::int64_t r) const { return index ? RowMap{data, stride, index + r} : RowMap{data + r * stride, stride, nullptr}; }  // rows r, r + 1, ...
};
RowMap row_map(const torch::Tensor& t2d, const std::int64_t* index = nullptr);  // [rows, cols], cols contiguous

struct KRange {
  std::int64_t begin = 0, count = 0;
};

// A packed weight as the kernel reads it (holding the packing's storage).
struct PackedWeight {
  torch::Tensor packed;
  const float* panels = nullptr;
  std::int64_t k = 0;       // the packed input width K
  std::int64_t n = 0;       // output columns: N, or the SwiGLU width W
  bool swiglu = false;      // packed by pack_swiglu_weight
  std::int64_t panel_count() const { return swiglu ? (n + 7) / 8 : (n + 15) / 16; }
};
// n: N (or W) of the packed matrix, checked against the packing's shape.
PackedWeight packed_weight(const torch::Tensor& packed, std::int64_t n, bool swiglu = false);
PackedWeight packed_block(const torch::Tensor& packed_blocks, std::int64_t i, std::int64_t b);

struct ProductOptions {
  std::vector<KRange> ranges;    // runs of K to multiply (empty: all of K); x is read at the same columns
  const float* bias = nullptr;   // [n] (not with SwiGLU)
  bool accumulate = false;       // out += instead of out = (not with SwiGLU)
  // Instead of `ranges`, per row: bit i set = K's block i (block_width columns) is read. Each register
  // tile of rows reads the union of its rows' blocks, so x must be zero in a row's other blocks (MoHD's
  // masked input: rows sorted by their set of blocks share a tile's work, whatever the sets' runs).
  const std::uint64_t* row_blocks = nullptr;  // [m]
  std::int64_t block_width = 0;
};

// out[r, 0:n] = sum over the ranges of x[r, range] W[:, range]^T (+ bias) (+ out[r] when accumulating), or
// SiLU(..gate..) * (..up..) for a SwiGLU packing, for rows r < m.
void packed_matmul(const RowMap& x, std::int64_t m, const PackedWeight& w, const RowMap& out, const ProductOptions& opt = {});

// packed_matmul split across the threads: by rows where there are more than kRowGrain of them
// (parallel_row_ranges), else by the weight's panels, every thread all the rows (a decode step: the weight,
// read once for all rows, is what takes the time, and both cores then read half of it).
void parallel_packed_matmul(const RowMap& x, std::int64_t m, const PackedWeight& w, const RowMap& out, const ProductOptions& opt = {});
// f(part, column) on each thread, the weight's panels split between them: part holds a thread's panels
// (whole ones, at least 6), column is its first output column. For products over few rows.
void parallel_panel_parts(const PackedWeight& w, const std::function<void(const PackedWeight& part, std::int64_t column)>& f);
// x [..., K] -> x W^T (+ bias) [..., n] by parallel_packed_matmul. x float32 CPU.
torch::Tensor packed_linear(const torch::Tensor& x, const PackedWeight& w, const torch::Tensor& bias = {});
// Whether a tensor can feed the packed products: float32 on the CPU, with autograd off.
bool packed_applies(const torch::Tensor& x);

}  // namespace moxlab
