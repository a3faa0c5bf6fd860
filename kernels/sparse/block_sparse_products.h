// The products of a block-sparse layer (kernels/sparse/block_sparse_linear.h) in the grouped layout, as
// per-run calls of the packed kernel (kernels/fused/packed_matmul.h): the forward and both backward
// products of MoHD's training form (core/engine/block_sparse_training.h) and the inference input side.
// For a hidden dimension d cut into N blocks of b, with rows in the selection's order (each set of
// routed blocks a run of rows), three shapes cover them all:
//   reading blocks:  out[r] = x[r, active blocks] W[:, active blocks]^T        (K = d, input ranges)
//   writing blocks:  out[r, block i] = x[r] W[block i]^T for r's active blocks   (n = d, panel ranges)
//   weight gradient: out[block i] = A[block i, users of i] P[:, users of i]^T   (K = the rows M, in runs)
// where "active blocks" are the shared ones and the run's routed ones. Each does active/N of the dense
// product's work. Single products run single-threaded inside one row-parallel region (the weight
// gradient's split balanced by work: a shared block's rows multiply over every row, a routed one's over
// its users only). CPU float32, no autograd.
#pragma once
#include <vector>

#include "kernels/fused/packed_matmul.h"
#include "kernels/sparse/block_sparse_linear.h"

namespace moxlab {

// The column ranges of group g's active blocks, shared then routed, adjacent ones merged.
std::vector<KRange> active_block_ranges(const BlockSelection& s, const BlockSelection::Group& g, std::int64_t b);

// Reading blocks: rows r < M of x (w.k = d = N b) -> out [M, w.n] (+ bias [w.n]; a SwiGLU packing gives its
// activation, without bias).
void block_sparse_read_products(const RowMap& x, const PackedWeight& w, const BlockSelection& s, const RowMap& out,
                                const float* bias = nullptr);

// Writing blocks: rows r < M of x (K inputs) -> out's active blocks, the weight [N b, K] packed block by
// block (pack_weight_blocks(w, b)); out's inactive blocks are left as they are (callers zero them).
void block_sparse_write_products(const RowMap& x, const torch::Tensor& w_blocks, std::int64_t b, const BlockSelection& s, const RowMap& out);

// Weight gradient: a [d, M] (row f: feature f's values over the rows, in the selection's row order) against
// w packed with K = M -> out [d, w.n]; the rows of a block that no row uses are zero.
void block_sparse_weight_grad(const RowMap& a, std::int64_t d, const PackedWeight& w, const BlockSelection& s, const RowMap& out);

}  // namespace moxlab
