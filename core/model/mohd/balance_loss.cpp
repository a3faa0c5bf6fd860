#include "core/model/mohd/balance_loss.h"

#include "core/model/batch_statistics.h"

namespace moxlab {

torch::Tensor sub_dim_balance_loss(const torch::Tensor& probs, int shared, double beta) {
  const std::int64_t n = probs.size(-1);
  if (n - shared < 1 || beta == 0) return torch::zeros({}, probs.options());
  auto s = probs.narrow(-1, shared, n - shared).reshape({-1, n - shared});  // [M, n_spec]
  auto p = batch_mean((s / s.sum(-1, true)).mean(0));                       // P_i (over the whole batch)
  auto top = s.detach().argmax(-1);
  // f_i: the share of tokens whose top specialised score is i (a count: one_hot validates its input with
  // two extra reductions and builds an [M, n] matrix, a measurable cost in every MoHD forward).
  auto f = batch_mean(torch::bincount(top, {}, n - shared).to(s.dtype()) / static_cast<double>(top.size(0)));
  return beta * (p * f).sum();
}

}  // namespace moxlab
