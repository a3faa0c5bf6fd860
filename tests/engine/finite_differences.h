// The finite-difference check every custom backward runs: a scalar loss of some input tensors, its
// autograd gradient against central differences (L(x + eps) - L(x - eps)) / (2 eps), element by element.
// The loss should be nonlinear (a tanh of the op times a random tensor, say), so a wrong gradient cannot
// pass by linearity.
#pragma once
#include <functional>
#include <vector>

#include "tests/torch_catch.h"

namespace moxlab::test {

// Checks every `stride`-th element of each input (float32 inputs: eps 1e-2 and tolerances near 2e-3 suit
// a loss of order one); returns how many were checked, so callers can require enough of them.
inline int check_finite_differences(const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& loss,
                                    const std::vector<torch::Tensor>& inputs, std::int64_t stride, double eps, double tol) {
  std::vector<torch::Tensor> with_grad;
  for (const auto& x : inputs) with_grad.push_back(x.detach().clone().requires_grad_());
  loss(with_grad).backward();
  torch::NoGradGuard ng;
  int checked = 0;
  for (std::size_t which = 0; which < inputs.size(); ++which) {
    const auto& g = with_grad[which].grad();
    REQUIRE(g.defined());
    for (std::int64_t i = 0; i < inputs[which].numel(); i += stride) {
      auto moved = inputs;
      const auto at = [&](double step) {
        moved[which] = inputs[which].clone();
        moved[which].view(-1)[i] += step;
        return loss(moved).item<double>();
      };
      const double fd = (at(eps) - at(-eps)) / (2 * eps);
      INFO("input " << which << ", element " << i);
      CHECK(g.view(-1)[i].item<double>() == Approx(fd).margin(tol).epsilon(tol));
      ++checked;
    }
  }
  return checked;
}

}  // namespace moxlab::test
