#include "kernels/sparse/block_sparse_linear.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <ATen/Parallel.h>

#include "kernels/fused/packed_matmul.h"
#include "kernels/sparse/block_sparse_products.h"
#include "kernels/sparse/monarch_mix.h"
#include "kernels/runtime/row_parallel.h"

namespace moxlab {

namespace {
// Rows per run on average from which the packed input side runs a product per run (block_sparse_input_packed).
constexpr std::int64_t kLongRun = 32;
}  // namespace

BlockSelection BlockSelection::from_mask(const torch::Tensor& active, int shared, const std::string& layout, std::int64_t parts) {
  TORCH_CHECK(active.dim() == 2 && active.scalar_type() == torch::kBool, "block selection: active must be [M, N] bool");
  TORCH_CHECK(layout == "auto" || layout == "grouped" || layout == "per_block", "block selection: unknown layout " + layout);
  BlockSelection s;
  s.tokens = active.size(0);
  s.blocks = static_cast<int>(active.size(1));
  s.shared = shared;
  TORCH_CHECK(shared >= 0 && shared <= s.blocks, "block selection: shared out of range");
  TORCH_CHECK(parts >= 1, "block selection: parts must be at least 1");
  // The [M, N] mask is read on the host: it is tiny, and a dozen small tensor ops (and a sync) per
  // component were a measurable share of a MoHD forward (docs/decisions/2026-11-25-mohd-inference-passes.md).
  const auto mask = active.to(torch::kCPU).contiguous();
  const bool* a = mask.data_ptr<bool>();
  for (std::int64_t m = 0; m < s.tokens; ++m)
    for (int i = 0; i < shared; ++i)
      TORCH_CHECK(a[m * s.blocks + i], "block selection: a shared block is inactive for some token");
  const int routed = s.blocks - shared;
  if (routed == 0) return s;
  if (routed <= 62 && layout != "per_block") {
    // Each token's set of routed blocks as a bit key; a stable sort by it makes every set a run of rows.
    std::vector<std::int64_t> key(static_cast<std::size_t>(s.tokens));
    for (std::int64_t m = 0; m < s.tokens; ++m) {
      std::int64_t k = 0;
      for (int i = 0; i < routed; ++i) k |= static_cast<std::int64_t>(a[m * s.blocks + shared + i]) << i;
      key[static_cast<std::size_t>(m)] = k;
    }
    auto order = torch::empty({s.tokens}, torch::kLong);
    std::int64_t* o = order.data_ptr<std::int64_t>();
    // Each part of the tokens sorted on its own (parts > 1: a thread's rows then hold only its own tokens).
    const std::int64_t part = parts > 1 ? (s.tokens + parts - 1) / parts : std::max<std::int64_t>(s.tokens, 1);
    for (std::int64_t p0 = 0; p0 < s.tokens; p0 += part) {
      const std::int64_t p1 = std::min(s.tokens, p0 + part);
      // A counting sort over the 2^routed keys where the buckets are no more than the tokens (or 64): a decode
      // step's single token with many routed blocks would otherwise clear up to 65537 counters. Both sorts
      // are stable: tokens keep their order within a set.
      if (routed <= 16 && (std::int64_t{1} << routed) <= std::max<std::int64_t>(64, p1 - p0)) {
        std::vector<std::int64_t> first((std::size_t{1} << routed) + 1, 0);
        for (std::int64_t m = p0; m < p1; ++m) ++first[static_cast<std::size_t>(key[static_cast<std::size_t>(m)]) + 1];
        for (std::size_t k = 1; k < first.size(); ++k) first[k] += first[k - 1];
        for (std::int64_t m = p0; m < p1; ++m) o[p0 + first[static_cast<std::size_t>(key[static_cast<std::size_t>(m)])]++] = m;
      } else {
        std::iota(o + p0, o + p1, p0);
        std::stable_sort(o + p0, o + p1, [&](std::int64_t x, std::int64_t y) { return key[x] < key[y]; });
      }
    }
    std::vector<Group> groups;
    std::vector<std::int64_t> distinct;
    for (std::int64_t r = 0; r < s.tokens;) {
      const std::int64_t k = key[static_cast<std::size_t>(o[r])], end = std::min(s.tokens, (r / part + 1) * part);
      Group gr{r, 0, {}};
      while (r < end && key[static_cast<std::size_t>(o[r])] == k) ++r, ++gr.count;
      for (int i = 0; i < routed; ++i)
        if ((k >> i) & 1) gr.blocks.push_back(shared + i);
      distinct.push_back(k);
      groups.push_back(std::move(gr));
    }
    // The matmuls of the distinct sets (each set once, however many parts hold it).
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::int64_t matmuls = 0;
    for (const auto k : distinct) matmuls += __builtin_popcountll(static_cast<unsigned long long>(k));
    if (layout == "grouped" || matmuls <= 2 * routed) {
      auto inverse = torch::empty({s.tokens}, torch::kLong);
      std::int64_t* inv = inverse.data_ptr<std::int64_t>();
      s.identity = true;
      for (std::int64_t r = 0; r < s.tokens; ++r) {
        inv[o[r]] = r;
        s.identity = s.identity && o[r] == r;
      }
      s.grouped = true;
      s.order = order.to(active.device());
      s.inverse = inverse.to(active.device());
      s.groups = std::move(groups);
      return s;
    }
  }
  for (int i = shared; i < s.blocks; ++i) s.users.push_back(active.select(1, i).nonzero().squeeze(1));
  return s;
}

torch::Tensor BlockSelection::to_rows(const torch::Tensor& per_token) const {
  return grouped && !identity ? per_token.index_select(0, order) : per_token;
}

torch::Tensor BlockSelection::from_rows(const torch::Tensor& rows) const {
  return grouped && !identity ? rows.index_select(0, inverse) : rows;
}

torch::Tensor block_sparse_input_linear(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s,
                                        const torch::Tensor& bias) {
  const std::int64_t d = x.size(1), b = d / s.blocks;
  TORCH_CHECK(w.size(1) == d && d % s.blocks == 0, "block-sparse input linear: shape mismatch");
  torch::Tensor out = s.shared > 0 ? torch::matmul(x.narrow(1, 0, s.shared * b), w.narrow(1, 0, s.shared * b).t())
                                   : torch::zeros({x.size(0), w.size(0)}, x.options());
  if (bias.defined()) out.add_(bias);
  if (s.grouped) {
    for (const auto& g : s.groups)
      for (int i : g.blocks)  // in place: addmm's backward needs neither the accumulator nor its old value
        out.narrow(0, g.start, g.count).addmm_(x.narrow(0, g.start, g.count).narrow(1, i * b, b), w.narrow(1, i * b, b).t());
    return out;
  }
  for (int i = s.shared; i < s.blocks; ++i) {
    const auto& idx = s.users[i - s.shared];
    if (idx.numel() == 0) continue;
    out.index_add_(0, idx, torch::matmul(x.narrow(1, i * b, b).index_select(0, idx), w.narrow(1, i * b, b).t()));
  }
  return out;
}

torch::Tensor block_sparse_input_linear_from_tokens(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s,
                                                    const torch::Tensor& bias) {
  TORCH_CHECK(w.size(1) == x.size(1) && x.size(1) % s.blocks == 0 && x.size(0) == s.tokens, "block-sparse input linear: shape mismatch");
  return block_sparse_input_linear(s.to_rows(x), w, s, bias);
}

torch::Tensor block_sparse_input_packed(const torch::Tensor& x, const PackedWeight& w, const BlockSelection& s,
                                        const torch::Tensor& bias) {
  TORCH_CHECK(s.grouped && packed_applies(x) && x.dim() == 2 && x.size(0) == s.tokens && x.size(1) == w.k && w.k % s.blocks == 0,
              "block-sparse packed input: needs the grouped layout and float32 CPU x [tokens, K] without autograd");
  const std::int64_t M = s.tokens, K = w.k, b = K / s.blocks;
  const auto xc = x.contiguous();
  const auto order = s.order.to(torch::kCPU).contiguous();
  const std::int64_t* op = order.data_ptr<std::int64_t>();
  const auto bc = bias.defined() ? bias.contiguous() : bias;
  auto out = torch::empty({M, w.n}, x.options());
  const RowMap tokens = row_map(xc), rows = row_map(out);
  if ((static_cast<std::int64_t>(s.groups.size()) * kLongRun <= M && M > kRowGrain) || s.blocks > 64) {
    // Long runs: a product per run over its group's blocks, reading the tokens' rows in place.
    block_sparse_read_products({tokens.data, tokens.stride, op}, w, s, rows, bc.defined() ? bc.data_ptr<float>() : nullptr);
    return out;
  }
  // Short runs (many sets, MoHD 75%'s 84 leave ~6 rows a run and thread): per-run products would be
  // partial register tiles, each streaming the weight again. Instead each thread gathers its rows in
  // sorted order with their inactive blocks zeroed and runs one product over them, each register tile
  // reading the union of its rows' blocks (a tile straddling two sets reads both). With long runs the
  // copy costs more than it saves, so they keep the per-run products
  // (docs/decisions/2026-11-26-mohd-short-runs.md).
  std::vector<std::uint64_t> row_blocks(static_cast<std::size_t>(M));
  const std::uint64_t shared_bits = s.shared == 0 ? 0 : ~std::uint64_t{0} >> (64 - s.shared);
  for (const auto& g : s.groups) {
    std::uint64_t bits = shared_bits;
    for (int i : g.blocks) bits |= std::uint64_t{1} << i;
    std::fill(row_blocks.begin() + g.start, row_blocks.begin() + g.start + g.count, bits);
  }
  // Rows a..e in sorted order, their inactive blocks zeroed.
  auto masked_rows = [&](std::int64_t a, std::int64_t e) {
    std::vector<float> masked(static_cast<std::size_t>((e - a) * K));
    for (std::int64_t r = a; r < e; ++r) {
      const float* src = tokens.row(op[r]);
      float* dst = masked.data() + (r - a) * K;
      for (int i = 0; i < s.blocks; ++i) {
        if ((row_blocks[static_cast<std::size_t>(r)] >> i) & 1) std::copy(src + i * b, src + (i + 1) * b, dst + i * b);
        else std::fill(dst + i * b, dst + (i + 1) * b, 0.0f);
      }
    }
    return masked;
  };
  ProductOptions opt;
  if (bc.defined()) opt.bias = bc.data_ptr<float>();
  opt.block_width = b;
  if (M <= kRowGrain) {  // a decode step: one product over all the rows, split by the weight's panels
    auto masked = masked_rows(0, M);
    opt.row_blocks = row_blocks.data();
    parallel_packed_matmul({masked.data(), K}, M, w, rows, opt);
    return out;
  }
  parallel_row_ranges(M, kRowGrain, [&](std::int64_t a, std::int64_t e) {
    auto masked = masked_rows(a, e);
    ProductOptions o = opt;
    o.row_blocks = row_blocks.data() + a;
    packed_matmul({masked.data(), K}, e - a, w, {rows.data + a * rows.stride, rows.stride}, o);
  });
  return out;
}

torch::Tensor block_sparse_output_linear(const torch::Tensor& h, const torch::Tensor& w, const BlockSelection& s,
                                         const torch::Tensor& scale) {
  const std::int64_t d = w.size(0), b = d / s.blocks, M = h.size(0);
  TORCH_CHECK(w.size(1) == h.size(1) && d % s.blocks == 0 && scale.size(1) == s.blocks, "block-sparse output linear: shape mismatch");
  auto y = torch::zeros({M, d}, h.options());
  if (s.shared > 0) {
    auto shared = torch::matmul(h, w.narrow(0, 0, s.shared * b).t()).view({M, s.shared, b});
    y.narrow(1, 0, s.shared * b).copy_((shared * scale.narrow(1, 0, s.shared).unsqueeze(-1)).view({M, s.shared * b}));
  }
  if (s.grouped) {
    for (const auto& g : s.groups)
      for (int i : g.blocks) {
        auto part = torch::matmul(h.narrow(0, g.start, g.count), w.narrow(0, i * b, b).t());
        y.narrow(0, g.start, g.count).narrow(1, i * b, b).copy_(part * scale.narrow(0, g.start, g.count).select(1, i).unsqueeze(1));
      }
    return y;
  }
  for (int i = s.shared; i < s.blocks; ++i) {
    const auto& idx = s.users[i - s.shared];
    if (idx.numel() == 0) continue;
    auto part = torch::matmul(h.index_select(0, idx), w.narrow(0, i * b, b).t());
    y.narrow(1, i * b, b).index_copy_(0, idx, part * scale.select(1, i).index_select(0, idx).unsqueeze(1));
  }
  return y;
}

torch::Tensor block_sparse_output_to_tokens(const torch::Tensor& h, const torch::Tensor& w_blocks, std::int64_t d,
                                            const BlockSelection& s, const torch::Tensor& scale, const torch::Tensor& mix) {
  const std::int64_t M = h.size(0), b = d / s.blocks;
  TORCH_CHECK(s.grouped && M == s.tokens, "block-sparse output to tokens: needs the grouped layout");
  TORCH_CHECK(d % s.blocks == 0 && w_blocks.dim() == 4 && w_blocks.size(0) == s.blocks && w_blocks.size(2) == h.size(1) &&
                  scale.size(0) == M && scale.size(1) == s.blocks,
              "block-sparse output to tokens: shape mismatch (the weight packed by pack_weight_blocks)");
  TORCH_CHECK(packed_applies(h), "block-sparse output to tokens: CPU float32 without autograd");
  const std::int64_t sb = s.shared * b;
  // Long runs: each run's routed blocks side by side (compact). Short runs (many sets): every routed block
  // has its column, and each block's product runs once over all of a thread's rows that use it (full
  // register tiles instead of a few rows per run and block).
  const bool by_block = static_cast<std::int64_t>(s.groups.size()) * kLongRun > M || M <= kRowGrain;
  std::size_t widest = 0;
  for (const auto& g : s.groups) widest = std::max(widest, g.blocks.size());
  const std::int64_t rb = by_block ? (s.blocks - s.shared) * b : static_cast<std::int64_t>(widest) * b;
  // Products: the shared blocks of every row, then the routed ones.
  auto shared = torch::empty({M, sb}, h.options());
  auto routed = torch::empty({M, rb}, h.options());
  std::vector<std::int32_t> row_group(static_cast<std::size_t>(M));
  for (std::size_t gi = 0; gi < s.groups.size(); ++gi) {
    const auto& g = s.groups[gi];
    std::fill(row_group.begin() + g.start, row_group.begin() + g.start + g.count, static_cast<std::int32_t>(gi));
  }
  const auto hc = h.contiguous();
  const auto sc = scale.contiguous();
  const std::int64_t groups = mix.defined() ? mix.size(0) : 0;
  TORCH_CHECK(!mix.defined() || groups * mix.size(2) == d, "block-sparse output to tokens: Monarch shape mismatch");
  auto y = torch::empty({M, d}, h.options());
  float *sp = shared.data_ptr<float>(), *rp = routed.data_ptr<float>();
  const float* scp = sc.data_ptr<float>();
  const float* bp = mix.defined() ? mix.data_ptr<float>() : nullptr;
  const auto order = s.order.to(torch::kCPU).contiguous();
  const std::int64_t* op = order.data_ptr<std::int64_t>();
  float* yp = y.data_ptr<float>();
  const std::int64_t mix_r = groups > 0 ? d / groups : 0, per_block = groups > 0 ? b / mix_r : 0;
  TORCH_CHECK(groups == 0 || (b % mix_r == 0), "block-sparse output to tokens: blocks must hold whole Monarch groups");
  const RowMap h_rows = row_map(hc);
  // Block i's product over rows [begin, end) that use it (every row for a shared block), into its column.
  auto block_product = [&](int i, std::int64_t begin, std::int64_t end, std::vector<std::int64_t>& users) {
    const RowMap in_rows{h_rows.data + begin * h_rows.stride, h_rows.stride};
    if (i < s.shared) return packed_matmul(in_rows, end - begin, packed_block(w_blocks, i, b), {sp + begin * sb + i * b, sb});
    users.clear();
    for (const auto& g : s.groups) {
      if (std::find(g.blocks.begin(), g.blocks.end(), i) == g.blocks.end()) continue;
      for (std::int64_t r = std::max(begin, g.start); r < std::min(end, g.start + g.count); ++r) users.push_back(r);
    }
    if (users.empty()) return;
    packed_matmul({h_rows.data, h_rows.stride, users.data()}, static_cast<std::int64_t>(users.size()), packed_block(w_blocks, i, b),
                  {rp + (i - s.shared) * b, rb, users.data()});
  };
  // The pass over rows [begin, end): each row's blocks scaled into its token's row, or through the Monarch mix.
  auto mix_rows = [&](std::int64_t begin, std::int64_t end) {
    std::vector<MixInput> in;
    for (std::int64_t r = begin; r < end; ++r) {
      const float* scale_r = scp + r * s.blocks;
      float* dst = yp + op[r] * d;
      if (r + 1 < end) {  // the next row's destination, for writing: rows land in token order, which the
                          // hardware prefetcher cannot follow
        const float* next = yp + op[r + 1] * d;
        for (std::int64_t c = 0; c < d; c += 16) __builtin_prefetch(next + c, 1);
      }
      // Each active block's values and scale: copied scaled, or handed to the mix, which scales as it reads.
      in.clear();
      auto add_block = [&](int i, const float* src) {
        if (groups == 0) return std::transform(src, src + b, dst + i * b, [&](float v) { return v * scale_r[i]; }), void();
        for (std::int64_t j = 0; j < per_block; ++j) in.push_back({i * per_block + j, src + j * mix_r, scale_r[i]});
      };
      if (groups == 0) std::fill(dst, dst + d, 0.0f);
      for (int i = 0; i < s.shared; ++i) add_block(i, sp + r * sb + i * b);
      const auto& blocks = s.groups[static_cast<std::size_t>(row_group[static_cast<std::size_t>(r)])].blocks;
      for (std::size_t j = 0; j < blocks.size(); ++j)
        add_block(blocks[j], rp + r * rb + (by_block ? blocks[j] - s.shared : static_cast<std::int64_t>(j)) * b);
      if (groups > 0) monarch_mix_row(in.data(), static_cast<std::int64_t>(in.size()), bp, dst, groups, mix_r);
    }
  };
  if (M <= kRowGrain) {
    // A decode step: the threads split the blocks some row uses (each block's weight read by one core),
    // then one pass.
    std::vector<int> used;
    for (int i = 0; i < s.blocks; ++i)
      if (i < s.shared || std::any_of(s.groups.begin(), s.groups.end(), [&](const auto& g) {
            return std::find(g.blocks.begin(), g.blocks.end(), i) != g.blocks.end();
          }))
        used.push_back(i);
    parallel_row_ranges(static_cast<std::int64_t>(used.size()), 1, [&](std::int64_t i0, std::int64_t i1) {
      std::vector<std::int64_t> users;
      for (std::int64_t i = i0; i < i1; ++i) block_product(used[static_cast<std::size_t>(i)], 0, M, users);
    });
    mix_rows(0, M);
    return y;
  }
  // Each thread its own contiguous rows: their shared and routed products (single-threaded), then the
  // pass over them, in one parallel region with the products still in the thread's cache.
  parallel_row_ranges(M, kRowGrain, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::int64_t> users;
    for (int i = 0; i < s.shared; ++i) block_product(i, begin, end, users);
    if (by_block) {
      for (int i = s.shared; i < s.blocks; ++i) block_product(i, begin, end, users);
    } else {
      for (const auto& g : s.groups) {
        const auto lo = std::max(begin, g.start), hi = std::min(end, g.start + g.count);
        if (hi <= lo) continue;
        for (std::size_t j = 0; j < g.blocks.size(); ++j)
          packed_matmul({h_rows.data + lo * h_rows.stride, h_rows.stride}, hi - lo, packed_block(w_blocks, g.blocks[j], b),
                        {rp + lo * rb + static_cast<std::int64_t>(j) * b, rb});
      }
    }
    mix_rows(begin, end);
  });
  return y;
}

}  // namespace moxlab
