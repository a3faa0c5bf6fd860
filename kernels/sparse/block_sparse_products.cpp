#include "kernels/sparse/block_sparse_products.h"

#include <algorithm>

#include <ATen/Parallel.h>

#include "kernels/runtime/row_parallel.h"

namespace moxlab {

namespace {

constexpr std::int64_t kPanelWidth = 16;  // output columns per packed panel

// f(group, first row, end row) for each group's part of rows [a, e).
template <typename F>
void for_runs_in(const BlockSelection& s, std::int64_t a, std::int64_t e, F&& f) {
  for (const auto& g : s.groups) {
    const auto lo = std::max(a, g.start), hi = std::min(e, g.start + g.count);
    if (hi > lo) f(g, lo, hi);
  }
}

// Columns [begin, begin + count) of a packing whose panels hold 16 columns each (begin a multiple of 16).
PackedWeight panel_columns(const PackedWeight& w, std::int64_t begin, std::int64_t count) {
  return {w.packed, w.panels + begin / kPanelWidth * w.k * kPanelWidth, w.k, count, false};
}

}  // namespace

std::vector<KRange> active_block_ranges(const BlockSelection& s, const BlockSelection::Group& g, std::int64_t b) {
  std::vector<KRange> ranges;
  if (s.shared > 0) ranges.push_back({0, s.shared * b});
  for (int i : g.blocks) {
    if (!ranges.empty() && ranges.back().begin + ranges.back().count == i * b)
      ranges.back().count += b;
    else
      ranges.push_back({i * b, b});
  }
  return ranges;
}

void block_sparse_read_products(const RowMap& x, const PackedWeight& w, const BlockSelection& s, const RowMap& out,
                                const float* bias) {
  TORCH_CHECK(s.grouped && w.k % s.blocks == 0 && (!w.swiglu || !bias), "block-sparse read products: need the grouped layout, K = N b (and no bias with SwiGLU)");
  const std::int64_t b = w.k / s.blocks;
  std::vector<ProductOptions> per_group(s.groups.size());
  for (std::size_t gi = 0; gi < s.groups.size(); ++gi) {
    per_group[gi].ranges = active_block_ranges(s, s.groups[gi], b);
    per_group[gi].bias = bias;
  }
  parallel_row_ranges(s.tokens, kRowGrain, [&](std::int64_t a, std::int64_t e) {
    for_runs_in(s, a, e, [&](const BlockSelection::Group& g, std::int64_t lo, std::int64_t hi) {
      const auto& opt = per_group[static_cast<std::size_t>(&g - s.groups.data())];
      if (opt.ranges.empty()) {  // no block at all (no shared, none routed): the product is the bias, or 0 (SiLU(0) 0 too)
        for (std::int64_t r = lo; r < hi; ++r)
          for (std::int64_t c = 0; c < w.n; ++c) out.row(r)[c] = bias ? bias[c] : 0.0f;
        return;
      }
      packed_matmul(x.from(lo), hi - lo, w, out.from(lo), opt);
    });
  });
}

void block_sparse_write_products(const RowMap& x, const torch::Tensor& w_blocks, std::int64_t b, const BlockSelection& s, const RowMap& out) {
  TORCH_CHECK(s.grouped && w_blocks.dim() == 4 && w_blocks.size(0) == s.blocks, "block-sparse write products: need the grouped layout and a block packing of N blocks");
  // Blocks of whole panels lie back to back in the packing: adjacent active blocks are one product.
  const bool merge = b % kPanelWidth == 0;
  const PackedWeight all = merge ? PackedWeight{w_blocks, w_blocks.data_ptr<float>(), w_blocks.size(2), s.blocks * b, false} : PackedWeight{};
  parallel_row_ranges(s.tokens, kRowGrain, [&](std::int64_t a, std::int64_t e) {
    for_runs_in(s, a, e, [&](const BlockSelection::Group& g, std::int64_t lo, std::int64_t hi) {
      const RowMap in = x.from(lo), rows_out = out.from(lo);
      auto product = [&](const PackedWeight& w, std::int64_t column) {
        packed_matmul(in, hi - lo, w, {rows_out.data + column, rows_out.stride, rows_out.index});
      };
      if (merge) {
        for (const KRange& c : active_block_ranges(s, g, b)) product(panel_columns(all, c.begin, c.count), c.begin);
        return;
      }
      for (int i = 0; i < s.shared; ++i) product(packed_block(w_blocks, i, b), i * b);
      for (int i : g.blocks) product(packed_block(w_blocks, i, b), i * b);
    });
  });
}

void block_sparse_weight_grad(const RowMap& a, std::int64_t d, const PackedWeight& w, const BlockSelection& s, const RowMap& out) {
  TORCH_CHECK(s.grouped && !w.swiglu && w.k == s.tokens && s.blocks > 0 && d % s.blocks == 0,
              "block-sparse weight gradient: need the grouped layout, K = the rows and d = N b");
  const std::int64_t b = d / s.blocks;
  // Each block's users as runs of rows (all of them for a shared block), adjacent runs merged.
  std::vector<std::vector<KRange>> users(static_cast<std::size_t>(s.blocks));
  std::vector<std::int64_t> used(static_cast<std::size_t>(s.blocks), 0);  // rows using each block
  for (int i = 0; i < s.shared; ++i) users[static_cast<std::size_t>(i)].push_back({0, s.tokens});
  for (const auto& g : s.groups)
    for (int i : g.blocks) {
      auto& u = users[static_cast<std::size_t>(i)];
      if (!u.empty() && u.back().begin + u.back().count == g.start)
        u.back().count += g.count;
      else
        u.push_back({g.start, g.count});
    }
  for (int i = 0; i < s.blocks; ++i)
    for (const auto& r : users[static_cast<std::size_t>(i)]) used[static_cast<std::size_t>(i)] += r.count;
  // Feature rows [r0, r1) within one block: one product over the block's users (zero without any).
  auto rows = [&](std::int64_t r0, std::int64_t r1) {
    while (r0 < r1) {
      const auto i = static_cast<std::size_t>(r0 / b);
      const std::int64_t end = std::min(r1, static_cast<std::int64_t>(i + 1) * b);
      if (users[i].empty()) {
        for (std::int64_t r = r0; r < end; ++r) std::fill(out.row(r), out.row(r) + w.n, 0.0f);
      } else {
        ProductOptions opt;
        opt.ranges = users[i];
        packed_matmul(a.from(r0), end - r0, w, out.from(r0), opt);
      }
      r0 = end;
    }
  };
  // The threads split the feature rows by work (rows x users), at multiples of 8 rows (a register tile).
  const std::int64_t parts = std::max<std::int64_t>(1, at::get_num_threads());
  std::int64_t total = 0;
  for (const auto u : used) total += u * b;
  std::vector<std::int64_t> bound{0};
  std::int64_t done = 0;
  for (std::int64_t r = 0; r < d && static_cast<std::int64_t>(bound.size()) < parts; r += 8) {
    done += used[static_cast<std::size_t>(r / b)] * std::min<std::int64_t>(8, d - r);
    if (done * parts >= total * static_cast<std::int64_t>(bound.size())) bound.push_back(std::min(d, r + 8));
  }
  while (static_cast<std::int64_t>(bound.size()) <= parts) bound.push_back(d);
  parallel_row_ranges(parts, 1, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p) rows(bound[static_cast<std::size_t>(p)], bound[static_cast<std::size_t>(p) + 1]);
  });
}

}  // namespace moxlab
