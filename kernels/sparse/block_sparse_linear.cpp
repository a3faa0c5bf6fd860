#include "kernels/sparse/block_sparse_linear.h"

#include <stdexcept>
#include <string>

namespace moxlab {

BlockSelection BlockSelection::from_mask(const torch::Tensor& active, int shared) {
  TORCH_CHECK(active.dim() == 2 && active.scalar_type() == torch::kBool, "block selection: active must be [M, N] bool");
  BlockSelection s;
  s.tokens = active.size(0);
  s.blocks = static_cast<int>(active.size(1));
  s.shared = shared;
  TORCH_CHECK(shared >= 0 && shared <= s.blocks, "block selection: shared out of range");
  if (shared > 0 && s.tokens > 0)
    TORCH_CHECK(active.narrow(1, 0, shared).all().item<bool>(), "block selection: a shared block is inactive for some token");
  for (int i = shared; i < s.blocks; ++i) s.users.push_back(active.select(1, i).nonzero().squeeze(1));
  return s;
}

torch::Tensor block_sparse_input_linear(const torch::Tensor& x, const torch::Tensor& w, const BlockSelection& s,
                                        const torch::Tensor& bias) {
  const std::int64_t d = x.size(1), b = d / s.blocks;
  TORCH_CHECK(w.size(1) == d && d % s.blocks == 0, "block-sparse input linear: shape mismatch");
  torch::Tensor out = s.shared > 0 ? torch::matmul(x.narrow(1, 0, s.shared * b), w.narrow(1, 0, s.shared * b).t())
                                   : torch::zeros({x.size(0), w.size(0)}, x.options());
  if (bias.defined()) out.add_(bias);
  for (int i = s.shared; i < s.blocks; ++i) {
    const auto& idx = s.users[i - s.shared];
    if (idx.numel() == 0) continue;
    auto part = torch::matmul(x.narrow(1, i * b, b).index_select(0, idx), w.narrow(1, i * b, b).t());
    out.index_add_(0, idx, part);  // in place: autograd needs neither operand of the add
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
  for (int i = s.shared; i < s.blocks; ++i) {
    const auto& idx = s.users[i - s.shared];
    if (idx.numel() == 0) continue;
    auto part = torch::matmul(h.index_select(0, idx), w.narrow(0, i * b, b).t());
    y.narrow(1, i * b, b).index_copy_(0, idx, part * scale.select(1, i).index_select(0, idx).unsqueeze(1));
  }
  return y;
}

}  // namespace moxlab
