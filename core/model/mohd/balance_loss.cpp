#include "core/model/mohd/balance_loss.h"

namespace moxlab {

torch::Tensor sub_dim_balance_loss(const torch::Tensor& probs, int shared, double beta) {
  const std::int64_t n = probs.size(-1);
  if (n - shared < 1 || beta == 0) return torch::zeros({}, probs.options());
  auto s = probs.narrow(-1, shared, n - shared).reshape({-1, n - shared});  // [M, n_spec]
  auto p = (s / s.sum(-1, true)).mean(0);                                   // P_i
  auto top = s.detach().argmax(-1);
  auto f = torch::one_hot(top, n - shared).to(s.dtype()).mean(0);          // f_i
  return beta * (p * f).sum();
}

}  // namespace moxlab
