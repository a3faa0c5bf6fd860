// Monarch's second factor with autograd on the column-mix kernel (core/engine/monarch_mix_training.h):
// hand values; forward and both gradients equal MonarchImpl::second_factor's (the einsum form) in float64
// on every ISA, at column counts r below, at and past a vector; central finite differences.
#include "tests/torch_catch.h"

#include "core/engine/monarch_mix_training.h"
#include "core/model/mohd/monarch.h"
#include "kernels/sparse/monarch_mix.h"
#include "tests/engine/finite_differences.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;

TEST_CASE("Monarch mix training: hand-computed forward and gradients", "[engine][mohd]") {
  // Two groups of one column (r = 1): y = B x with B = b2[0] = [[1, 2], [3, 4]].
  const auto x = torch::tensor({{1.0f, -1.0f}}).requires_grad_();
  const auto b2 = torch::tensor({{{1.0f, 2.0f}, {3.0f, 4.0f}}}).requires_grad_();
  const auto y = engine::monarch_mix_training(x, b2);
  CHECK(torch::equal(y.detach(), torch::tensor({{1.0f - 2.0f, 3.0f - 4.0f}})));
  y.backward(torch::tensor({{1.0f, 10.0f}}));
  CHECK(torch::equal(x.grad(), torch::tensor({{1.0f + 30.0f, 2.0f + 40.0f}})));              // B^T dy
  CHECK(torch::equal(b2.grad(), torch::tensor({{{1.0f, -1.0f}, {10.0f, -10.0f}}})));          // dy x^T
}

TEST_CASE("Monarch mix training equals the einsum form in float64 on every ISA", "[engine][mohd]") {
  for (const auto [groups, r, rows] : {std::tuple{8, 24, 70}, std::tuple{4, 8, 5}, std::tuple{3, 3, 130}, std::tuple{12, 16, 33}}) {
    INFO("groups " << groups << ", r " << r << ", rows " << rows);
    torch::manual_seed(groups * 100 + r);
    Monarch m(groups * r, groups);
    const auto x = torch::randn({2, rows, groups * r}), dy = torch::randn({2, rows, groups * r});
    Monarch m64(groups * r, groups);
    m64->to(torch::kDouble);
    {
      torch::NoGradGuard ng;
      m64->b2.copy_(m->b2);
    }
    auto xr = d64(x).requires_grad_();
    const auto yr = m64->second_factor(xr);
    yr.backward(d64(dy));
    test::for_each_isa([&] {
      auto xp = x.clone().requires_grad_();
      auto b2 = m->b2.detach().clone().requires_grad_();
      const auto y = engine::monarch_mix_training(xp, b2);
      y.backward(dy);
      CHECK(close_to(y, yr, 1e-5, 1e-5));
      CHECK(close_to(xp.grad(), xr.grad(), 1e-5, 1e-5));
      CHECK(close_to(b2.grad(), m64->b2.grad(), 1e-5, 1e-4));
    });
  }
}

TEST_CASE("Monarch mix training: the custom backward against central finite differences", "[engine][mohd]") {
  torch::manual_seed(9);
  const int groups = 4, r = 20;
  const auto q = torch::randn({7, groups * r});
  const auto loss = [&](const std::vector<torch::Tensor>& in) { return (torch::tanh(engine::monarch_mix_training(in[0], in[1])) * q).sum(); };
  CHECK(test::check_finite_differences(loss, {torch::randn({7, groups * r}), torch::randn({r, groups, groups}) * 0.5}, 7, 1e-2, 2e-3) > 50);
  CHECK_FALSE(engine::monarch_mix_training_applies(torch::zeros({2, 8}, torch::kDouble), torch::zeros({2, 4, 4})));
  CHECK_THROWS(engine::monarch_mix_training(torch::zeros({2, 9}), torch::zeros({2, 4, 4})));
}
