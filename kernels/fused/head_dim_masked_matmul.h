// The output projection of attention heads whose every row keeps only some head dims, the same ones in
// every head: ToMoE's v/o mask s_t (section 3.3, Eq. 4-5: W_O reads each token's heads only at its top-K
// dims). y[r] = sum over kept d, over heads h of x[r, h hd + d] W[:, h hd + d].
//
// Why a kernel of its own: a GEMM's register tile shares each weight load between 8 rows, and with each
// token keeping its own half of the dims the 8 rows' union is nearly every dim, so masking x saves nothing
// (a per-row kernel that gathers each row's own columns loses the sharing and ran no faster). Here the
// product runs dim by dim instead: for each head dim d, the rows that keep it (tiles of 8 of them) times
// W's H columns of that dim, accumulated into those rows' outputs, so only the kept (row, dim) pairs are
// multiplied and each weight load still serves 8 rows. The price is K = H per pass (the rows' outputs are
// loaded and stored once per kept dim), so it wins only where few enough dims are kept (`bench matmul`
// times it; docs/decisions/2026-11-26-tomoe-masked-wo.md).
//
// The weight is W [N, H hd] with its columns reordered to (dim, head), packed as pack_weight packs
// (kernels/fused/packed_matmul.h), so each dim's H columns are adjacent in every panel. Single-threaded:
// callers split rows across threads. CPU float32, no bias, no autograd.
#pragma once
#include <cstdint>

#include <torch/torch.h>

#include "kernels/fused/packed_matmul.h"

namespace moxlab {

// W [N, heads * hd] -> the packing of W's columns in (dim, head) order; PackedWeight via packed_weight(.., N).
torch::Tensor pack_head_dim_major(const torch::Tensor& w, std::int64_t heads);

// out[r, 0:n] = sum over d with mask[r * mask_stride + d] != 0 of sum_h x[r, h hd + d] W[:, h hd + d], for
// rows r < m (x's other dims are not read; a row that keeps none gets zeros). w: from pack_head_dim_major.
void head_dim_masked_matmul(const RowMap& x, std::int64_t m, const PackedWeight& w, std::int64_t heads, const float* mask,
                            std::int64_t mask_stride, const RowMap& out);

}  // namespace moxlab
