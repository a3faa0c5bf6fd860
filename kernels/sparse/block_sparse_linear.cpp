#include "kernels/sparse/block_sparse_linear.h"

#include <string>

namespace moxlab {

BlockSelection BlockSelection::from_mask(const torch::Tensor& active, int shared, const std::string& layout) {
  TORCH_CHECK(active.dim() == 2 && active.scalar_type() == torch::kBool, "block selection: active must be [M, N] bool");
  TORCH_CHECK(layout == "auto" || layout == "grouped" || layout == "per_block", "block selection: unknown layout " + layout);
  BlockSelection s;
  s.tokens = active.size(0);
  s.blocks = static_cast<int>(active.size(1));
  s.shared = shared;
  TORCH_CHECK(shared >= 0 && shared <= s.blocks, "block selection: shared out of range");
  if (shared > 0 && s.tokens > 0)
    TORCH_CHECK(active.narrow(1, 0, shared).all().item<bool>(), "block selection: a shared block is inactive for some token");
  const int routed = s.blocks - shared;
  if (routed == 0) return s;
  if (routed <= 62 && layout != "per_block") {
    // Each token's set of routed blocks as a bit key; sorting by it makes every set a run of rows.
    const auto bits = torch::pow(2, torch::arange(routed, torch::kLong));
    const auto key = (active.narrow(1, shared, routed).to(torch::kLong) * bits).sum(1);
    auto [sorted, order] = torch::sort(key, /*stable=*/true, 0, false);
    auto [values, inverse_unused, counts] = torch::unique_consecutive(sorted, false, true);
    const auto* v = values.data_ptr<std::int64_t>();
    const auto* c = counts.data_ptr<std::int64_t>();
    std::vector<Group> groups;
    std::int64_t start = 0, matmuls = 0;
    for (std::int64_t g = 0; g < values.size(0); ++g) {
      Group gr{start, c[g], {}};
      for (int i = 0; i < routed; ++i)
        if ((v[g] >> i) & 1) gr.blocks.push_back(shared + i);
      matmuls += static_cast<std::int64_t>(gr.blocks.size());
      start += c[g];
      groups.push_back(std::move(gr));
    }
    if (layout == "grouped" || matmuls <= 2 * routed) {
      s.grouped = true;
      s.order = order;
      s.inverse = torch::empty_like(order).scatter_(0, order, torch::arange(s.tokens, torch::kLong));
      s.groups = std::move(groups);
      return s;
    }
  }
  for (int i = shared; i < s.blocks; ++i) s.users.push_back(active.select(1, i).nonzero().squeeze(1));
  return s;
}

torch::Tensor BlockSelection::to_rows(const torch::Tensor& per_token) const {
  return grouped ? per_token.index_select(0, order) : per_token;
}

torch::Tensor BlockSelection::from_rows(const torch::Tensor& rows) const {
  return grouped ? rows.index_select(0, inverse) : rows;
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

}  // namespace moxlab
