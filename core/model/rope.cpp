#include "core/model/rope.h"

#include "core/model/op_forms.h"

namespace moxlab {

Rope::Rope(int head_dim, int max_seq_len, double theta) {
  const int half = head_dim / 2;
  auto i = torch::arange(half, torch::kFloat64);
  auto inv_freq = torch::pow(theta, -2.0 * i / head_dim);           // theta^(-2i/d)
  auto pos = torch::arange(max_seq_len, torch::kFloat64).unsqueeze(1);
  auto angle = (pos * inv_freq.unsqueeze(0)).to(torch::kFloat32);   // [T, d/2]
  cos_ = angle.cos();
  sin_ = angle.sin();
}

Rope Rope::select_pairs(const torch::Tensor& pairs) const {
  Rope r;
  r.cos_ = cos_.index_select(1, pairs);
  r.sin_ = sin_.index_select(1, pairs);
  return r;
}

namespace {
// Rotates the pairs of xp [..., head_dim/2, 2] by angles whose cos / sin broadcast against [..., head_dim/2].
torch::Tensor rotate_pairs(const torch::Tensor& xp, const torch::Tensor& c, const torch::Tensor& s) {
  auto x0 = xp.select(-1, 0), x1 = xp.select(-1, 1);
  return torch::stack({x0 * c - x1 * s, x0 * s + x1 * c}, -1).flatten(-2);
}
}  // namespace

torch::Tensor Rope::apply(const torch::Tensor& x, int64_t start) const {
  const auto T = x.size(1);
  TORCH_CHECK(start + T <= cos_.size(0), "sequence longer than model.max_seq_len");
  if (auto out = rope_in_form(x, cos_, sin_, start); out.defined()) return out;
  auto c = cos_.narrow(0, start, T).to(x.device()).view({1, T, 1, -1});
  auto s = sin_.narrow(0, start, T).to(x.device()).view({1, T, 1, -1});
  return rotate_pairs(x.view({x.size(0), T, x.size(2), -1, 2}), c, s);
}

torch::Tensor Rope::apply_at(const torch::Tensor& x, const torch::Tensor& positions) const {
  // [n, head_dim/2] angles of each row's own position
  return rotate_pairs(x.view({x.size(0), -1, 2}), cos_.index_select(0, positions), sin_.index_select(0, positions));
}

torch::Tensor Rope::apply_rows(const torch::Tensor& x, const torch::Tensor& positions) const {
  const auto H = x.size(1);
  return apply_at(x.reshape({-1, x.size(2)}), positions.repeat_interleave(H)).view(x.sizes());
}

}  // namespace moxlab
