// The packed training products (core/engine/packed_linear.h): y = x W^T + b and its three gradients on the
// packed kernels equal torch::linear's (hand values; every ISA against float64 on shapes with tails;
// central finite differences of a nonlinear loss through the custom backward), packings follow the
// weight's in-place updates, frozen weights get no gradient, and a whole model's training pass in the
// packed forms equals the reference pass.
#include "tests/torch_catch.h"

#include "core/engine/packed_linear.h"
#include "core/engine/training_forms.h"
#include "core/model/transformer.h"
#include "tests/engine/finite_differences.h"
#include "tests/kernels/isa_cross_check.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;
using moxlab::test::check_finite_differences;
using moxlab::test::close_to;
using moxlab::test::d64;
using moxlab::test::for_each_isa;
using moxlab::test::tiny_model;

TEST_CASE("packed linear: hand-computed forward and gradients", "[engine]") {
  const auto x = torch::tensor({{1.0f, 2.0f}}).requires_grad_();
  const auto w = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}}).requires_grad_();
  const auto b = torch::tensor({0.5f, 0.0f, -1.0f}).requires_grad_();
  const auto y = engine::packed_linear_autograd(x, w, b);
  // y = (1 + 0.5, 2, 1 + 2 - 1)
  CHECK(torch::equal(y.detach(), torch::tensor({{1.5f, 2.0f, 2.0f}})));
  y.sum().backward();
  CHECK(torch::equal(x.grad(), torch::tensor({{2.0f, 2.0f}})));  // dX = 1^T W: column sums
  CHECK(torch::equal(w.grad(), torch::tensor({{1.0f, 2.0f}, {1.0f, 2.0f}, {1.0f, 2.0f}})));  // dW = 1 x
  CHECK(torch::equal(b.grad(), torch::tensor({1.0f, 1.0f, 1.0f})));
}

TEST_CASE("packed linear: forward and gradients equal float64 torch::linear on every ISA", "[engine]") {
  // Rows below and past a register tile and the row grain, widths with panel tails, a 3-D input.
  struct Shape {
    std::vector<std::int64_t> x;
    std::int64_t n;
  };
  for (const Shape& s : {Shape{{1, 5}, 3}, Shape{{37, 21}, 19}, Shape{{2, 45, 40}, 33}, Shape{{130, 64}, 48}}) {
    torch::manual_seed(11);
    const auto k = s.x.back();
    const auto x = torch::randn(s.x), w = torch::randn({s.n, k}) / std::sqrt(double(k)), b = torch::randn({s.n});
    const auto dy = torch::randn([&] { auto v = s.x; v.back() = s.n; return v; }());
    auto xr = d64(x).requires_grad_(), wr = d64(w).requires_grad_(), br = d64(b).requires_grad_();
    const auto yr = torch::linear(xr, wr, br);
    yr.backward(d64(dy));
    for_each_isa([&] {
      INFO("x " << x.sizes() << ", n " << s.n);
      auto xp = x.clone().requires_grad_(), wp = w.clone().requires_grad_(), bp = b.clone().requires_grad_();
      const auto y = engine::packed_linear_autograd(xp, wp, bp);
      y.backward(dy);
      CHECK(close_to(y, yr, 1e-5, 1e-5));
      CHECK(close_to(xp.grad(), xr.grad(), 1e-5, 1e-5));
      CHECK(close_to(wp.grad(), wr.grad(), 1e-5, 1e-4));
      CHECK(close_to(bp.grad(), br.grad(), 1e-5, 1e-4));
    });
  }
}

TEST_CASE("packed linear: the custom backward against central finite differences", "[engine]") {
  // L = sum(tanh(x W^T + b) * r)
  torch::manual_seed(4);
  const auto x = torch::randn({9, 20}), w = torch::randn({18, 20}) * 0.2, b = torch::randn({18}), r = torch::randn({9, 18});
  const auto loss = [&](const std::vector<torch::Tensor>& in) { return (torch::tanh(engine::packed_linear_autograd(in[0], in[1], in[2])) * r).sum(); };
  CHECK(check_finite_differences(loss, {x, w, b}, 7, 1e-2, 2e-3) > 50);
}

TEST_CASE("packed products: packings follow in-place updates, frozen weights and inputs get no gradient", "[engine]") {
  torch::manual_seed(6);
  const auto form = engine::packed_products();
  auto w = torch::randn({24, 16}).requires_grad_();
  const auto x = torch::randn({40, 16});
  CHECK(close_to(form(x, w, {}).detach(), torch::linear(x, w.detach()), 1e-5, 1e-5));
  {
    torch::NoGradGuard ng;
    w.mul_(-2.0).add_(1.0);  // an optimiser step: the version moves
  }
  CHECK(close_to(form(x, w, {}).detach(), torch::linear(x, w.detach()), 1e-5, 1e-5));
  // A frozen weight (ToMoE's conversion): the input's gradient only.
  const auto frozen = torch::randn({24, 16});
  auto xg = x.clone().requires_grad_();
  form(xg, frozen, {}).sum().backward();
  CHECK(close_to(xg.grad(), torch::ones({40, 24}).mm(frozen), 1e-5, 1e-5));
  CHECK_FALSE(frozen.grad().defined());
  // An input without gradient: the weight's only.
  form(x, w, {}).sum().backward();
  CHECK(close_to(w.grad(), torch::ones({24, 40}).mm(x), 1e-5, 1e-4));
  // Not float32 CPU: torch::linear.
  const auto xd = x.to(torch::kDouble);
  CHECK(torch::equal(form(xd, w.detach().to(torch::kDouble), {}), torch::linear(xd, w.detach().to(torch::kDouble))));
}

TEST_CASE("a model's training pass in the packed forms equals the reference pass", "[engine]") {
  for (const char* kind : {"dense", "tomoe"}) {
    INFO(kind);
    ModelOptions o = tiny_model(32, 50);
    o.attention = o.ffn = kind;
    torch::manual_seed(2);
    Transformer m(o);
    const auto tokens = torch::randint(0, 50, {2, 12}, torch::kLong);
    std::vector<std::map<std::string, torch::Tensor>> grads;
    std::vector<torch::Tensor> logits;
    for (const Form form : {Form::reference, Form::automatic}) {
      m.zero_grad();
      torch::manual_seed(9);  // the same Gumbel noise in both passes
      Analysis an;
      const TrainingForms forms = training_forms(m.blocks, m.options(), form);
      logits.push_back(m.forward(tokens, an, forms.pass()));
      auto loss = logits.back().pow(2).mean();
      if (const auto aux = an.total_aux_loss(); aux.defined()) loss = loss + aux;
      loss.backward();
      auto& g = grads.emplace_back();
      for (const auto& p : m.named_parameters())
        if (p.value().grad().defined()) g[p.key()] = p.value().grad().clone();
    }
    CHECK(close_to(logits[1], logits[0], 1e-4, 1e-5));
    REQUIRE(grads[0].size() == grads[1].size());
    for (const auto& [name, g] : grads[0]) {
      INFO(name);
      CHECK(close_to(grads[1].at(name), g, 1e-3, 1e-5));
    }
  }
}
