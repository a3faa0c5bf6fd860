// ToMoE (the paper's App. A.3 and section 3.4) building blocks against hand computations: Gumbel(0, 1)
// noise moments, the straight-through Gumbel-Softmax (Eq. 14) and Gumbel-Sigmoid (Eq. 15) forward values
// and their gradients (hand-derived and by central finite differences of the soft relaxation), the
// log-ratio distance f, the union of masks (Eq. 6, 16) and its regulariser (Eq. 7), and Switch load
// balancing (Eq. 9).
#include "tests/torch_catch.h"

#include <cmath>

#include "core/common/error.h"
#include "core/model/tomoe/gumbel_gates.h"
#include "core/model/tomoe/tomoe_regularisers.h"

using namespace moxlab;

namespace {
torch::Tensor t(std::vector<double> v) { return torch::tensor(v, torch::kDouble); }

// Central finite differences of scalar f at x, one coordinate at a time.
torch::Tensor finite_differences(const std::function<double(const torch::Tensor&)>& f, const torch::Tensor& x) {
  const double h = 1e-6;
  auto g = torch::zeros_like(x);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    auto xp = x.detach().clone(), xm = x.detach().clone();
    xp.view(-1)[i] += h;
    xm.view(-1)[i] -= h;
    g.view(-1)[i] = (f(xp) - f(xm)) / (2 * h);
  }
  return g;
}
}  // namespace

TEST_CASE("Gumbel(0,1) noise: mean Euler's gamma, variance pi^2/6, reproducible from a seeded generator",
          "[tomoe][gumbel]") {
  auto gen = at::detail::createCPUGenerator(7);
  auto g = gumbel_noise({200000}, gen, torch::kDouble);
  REQUIRE(torch::isfinite(g).all().item<bool>());
  CHECK(g.mean().item<double>() == Approx(0.5772156649).margin(0.01));
  CHECK(g.var().item<double>() == Approx(M_PI * M_PI / 6).margin(0.03));
  auto again = gumbel_noise({200000}, at::detail::createCPUGenerator(7), torch::kDouble);
  CHECK(torch::equal(g, again));
}

TEST_CASE("ST-Gumbel-Softmax (Eq. 14): one-hot argmax forward, softmax gradient backward", "[tomoe][gumbel]") {
  // (x + g) / tau = ([1, 2, 0.5] + [0.3, -1, 0.2]) / 0.4 = [3.25, 2.5, 1.75]: expert 0 wins although
  // expert 1 has the largest logit, because the noise decides.
  auto x = t({1.0, 2.0, 0.5}).requires_grad_();
  auto g = t({0.3, -1.0, 0.2});
  auto y = st_gumbel_softmax(x, g, 0.4);
  CHECK(torch::equal(y.detach(), t({1, 0, 0})));

  // Backward of sum(w . y) is that of sum(w . p), p = softmax(z): dx = p (w - p.w) / tau. By hand:
  // p = [1, e^-0.75, e^-1.5] / 1.69550 = [0.589798, 0.278601, 0.131602]; p.w = 1.541804.
  const std::vector<double> w = {1, 2, 3};
  (y * t(w)).sum().backward();
  const std::vector<double> p = {0.589798, 0.278601, 0.131602};
  const double pw = 1.541804;
  for (int i = 0; i < 3; ++i) CHECK(x.grad()[i].item<double>() == Approx(p[i] * (w[i] - pw) / 0.4).margin(1e-5));
  CHECK(x.grad()[0].item<double>() == Approx(-0.798887).margin(1e-5));

  auto soft = [&](const torch::Tensor& xx) { return (torch::softmax((xx + g) / 0.4, -1) * t(w)).sum().item<double>(); };
  CHECK(torch::allclose(x.grad(), finite_differences(soft, x), 1e-5, 1e-6));

  // Zero noise (evaluation) is the plain argmax of the logits, row by row.
  auto rows = torch::tensor({{0.1, 0.9, 0.3}, {2.0, -1.0, 0.0}}, torch::kDouble);
  CHECK(torch::equal(st_gumbel_softmax(rows, torch::zeros_like(rows), 0.4),
                     torch::tensor({{0.0, 1.0, 0.0}, {1.0, 0.0, 0.0}}, torch::kDouble)));
  CHECK_THROWS_AS(st_gumbel_softmax(x, g, 0.0), Error);
  CHECK_THROWS_AS(st_gumbel_softmax(x, t({0, 0}), 0.4), Error);
}

TEST_CASE("ST-Gumbel-Sigmoid (Eq. 15): 0/1 mask forward, sigmoid gradient backward, offset 3 keeps all",
          "[tomoe][gumbel]") {
  // x + g + b = [-1, -0.1, 0, 0.1, 3] -> sigmoid(./0.4) = [0.0759, 0.4378, 0.5, 0.5622, 0.9994] -> [0, 0, 1, 1, 1].
  auto x = t({-4.0, -3.1, -3.0, -2.9, 0.0}).requires_grad_();
  auto g = torch::zeros({5}, torch::kDouble);
  auto m = st_gumbel_sigmoid(x, g, 0.4, 3.0);
  CHECK(torch::equal(m.detach(), t({0, 0, 1, 1, 1})));

  // d/dx sum(w . m) = w sigma(z)(1 - sigma(z)) / tau, z = (x + b) / tau. At x + b = -1: z = -2.5,
  // sigma = 0.0758582, sigma (1 - sigma) = 0.0701037, / 0.4 = 0.175259. At x + b = 0: 0.25 / 0.4 = 0.625.
  const std::vector<double> w = {1.0, -2.0, 0.5, 3.0, 1.0};
  (m * t(w)).sum().backward();
  CHECK(x.grad()[0].item<double>() == Approx(0.175259).margin(1e-6));
  CHECK(x.grad()[2].item<double>() == Approx(0.5 * 0.625).margin(1e-9));
  auto soft = [&](const torch::Tensor& xx) { return (torch::sigmoid((xx + g + 3.0) / 0.4) * t(w)).sum().item<double>(); };
  CHECK(torch::allclose(x.grad(), finite_differences(soft, x), 1e-5, 1e-7));

  // With offset 3, zero logits keep every channel under Gumbel noise: P(g < -3) = exp(-e^3) ~ 2e-9.
  auto gen = at::detail::createCPUGenerator(3);
  auto zeros = torch::zeros({100000});
  CHECK(st_gumbel_sigmoid(zeros, gumbel_noise({100000}, gen), 0.4, 3.0).sum().item<float>() == 100000);
  // Without the offset, half-ish are kept: P(g >= 0) = 1 - exp(-1) = 0.632.
  CHECK(st_gumbel_sigmoid(zeros, gumbel_noise({100000}, gen), 0.4, 0.0).mean().item<float>() ==
        Approx(0.632).margin(0.01));
}

TEST_CASE("Log-ratio distance f(x, y) = log(max/min): symmetric, zero at equality, gradient sign(x-y)/x",
          "[tomoe][regulariser]") {
  auto x = torch::tensor(0.5, torch::kDouble).requires_grad_();
  auto d = log_ratio_distance(x, 2.0);
  CHECK(d.item<double>() == Approx(std::log(4.0)));
  d.backward();
  CHECK(x.grad().item<double>() == Approx(-2.0));  // d/dx log(2 / x) = -1/x
  CHECK(log_ratio_distance(torch::tensor(2.0), 0.5).item<float>() == Approx(std::log(4.0)));
  CHECK(log_ratio_distance(torch::tensor(1.5), 1.5).item<float>() == 0.0f);
}

TEST_CASE("Union of masks (Eq. 6, 16) and the union regulariser (Eq. 7)", "[tomoe][regulariser]") {
  // Hard masks of 2 tokens (or experts) over 4 positions: kept by either -> [1, 0, 1, 1].
  auto hard = torch::tensor({{1.0, 0.0, 0.0, 1.0}, {0.0, 0.0, 1.0, 1.0}}, torch::kDouble);
  CHECK(torch::equal(union_of_masks(hard), t({1, 0, 1, 1})));

  // Soft masks: u = 1 - (1 - a)(1 - b); a = [0.5, 0.2], b = [0.5, 0.1] -> [0.75, 0.28]; du/da = 1 - b.
  auto soft = torch::tensor({{0.5, 0.2}, {0.5, 0.1}}, torch::kDouble).requires_grad_();
  auto u = union_of_masks(soft);
  CHECK(u[0].item<double>() == Approx(0.75));
  CHECK(u[1].item<double>() == Approx(0.28));
  u.sum().backward();
  CHECK(soft.grad()[0][1].item<double>() == Approx(0.9));
  CHECK(soft.grad()[1][0].item<double>() == Approx(0.5));

  // R_U over two layers: f(3/4, 1) = log(4/3) = 0.287682 and f(1, 1) = 0 -> mean 0.143841.
  auto r = union_regulariser({t({1, 0, 1, 1}), t({1, 1, 1})});
  CHECK(r.item<double>() == Approx(0.143841).margin(1e-6));
  CHECK_THROWS_AS(union_regulariser({}), Error);
}

TEST_CASE("Switch load balancing (Eq. 9): N sum F_i P_i, 1 when uniform, gradient only through P",
          "[tomoe][regulariser]") {
  // 4 tokens, 2 experts: F = [3/4, 1/4], P = [0.6, 0.4] -> 2 (0.45 + 0.1) = 1.1.
  auto g = torch::tensor({{1.0, 0.0}, {1.0, 0.0}, {0.0, 1.0}, {1.0, 0.0}}, torch::kDouble);
  auto p = torch::tensor({{0.7, 0.3}, {0.6, 0.4}, {0.2, 0.8}, {0.9, 0.1}}, torch::kDouble).requires_grad_();
  auto l = switch_load_balance(g, p);
  CHECK(l.item<double>() == Approx(1.1));
  l.backward();
  CHECK(p.grad()[0][0].item<double>() == Approx(2 * 0.75 / 4));  // N F_i / T
  CHECK(p.grad()[2][1].item<double>() == Approx(2 * 0.25 / 4));
  auto uniform = torch::full({6, 3}, 1.0 / 3, torch::kDouble);
  auto cycle = torch::eye(3, torch::kDouble).repeat({2, 1});
  CHECK(switch_load_balance(cycle, uniform).item<double>() == Approx(1.0));
  CHECK_THROWS_AS(switch_load_balance(g, uniform), Error);
}

TEST_CASE("The official load balancing: sum F_i P_i with P the mean straight-through route, 1/N when balanced",
          "[tomoe][regulariser]") {
  // 4 tokens, 2 experts, hard routes [0, 0, 1, 0]: F = P = [3/4, 1/4] -> 9/16 + 1/16 = 0.625 (Eq. 9's N sum F P
  // with the softmax would weigh the same routes by N = 2 and other probabilities).
  auto soft = torch::tensor({{0.7, 0.3}, {0.6, 0.4}, {0.2, 0.8}, {0.9, 0.1}}, torch::kDouble).requires_grad_();
  const auto hard = torch::tensor({{1.0, 0.0}, {1.0, 0.0}, {0.0, 1.0}, {1.0, 0.0}}, torch::kDouble);
  const auto route = hard + soft - soft.detach();  // straight-through: one-hot forward, softmax gradient
  auto l = routed_load_balance(route);
  CHECK(l.item<double>() == Approx(0.625));
  l.backward();
  CHECK(soft.grad()[0][0].item<double>() == Approx(0.75 / 4));  // F_i / T: the gradient reaches P only
  CHECK(soft.grad()[2][1].item<double>() == Approx(0.25 / 4));
  CHECK(routed_load_balance(torch::eye(4, torch::kDouble).repeat({3, 1})).item<double>() == Approx(0.25));  // 1/N
}

TEST_CASE("Parameter regulariser (Eq. 8): max widths, T(d_MoE) by hand, f against p·T_total", "[tomoe][regulariser]") {
  // Widest expert: rows keep 2, 3, 1 channels -> d = 3; the gradient reaches only that row.
  auto masks = torch::tensor({{1.0, 1.0, 0.0, 0.0}, {1.0, 1.0, 1.0, 0.0}, {0.0, 0.0, 0.0, 1.0}}).requires_grad_();
  auto d = max_width(masks);
  CHECK(d.item<float>() == 3.0f);
  d.backward();
  CHECK(torch::equal(masks.grad().sum(-1), torch::tensor({0.0f, 4.0f, 0.0f})));

  // dim 16, 4 heads, 2 KV heads of 4 dims, d_mid 24, 2 layers. Full: per layer attention
  // 16·6·4·2 = 768 (W_Q 256 + W_K 128 + W_V 128 + W_O 256) and SwiGLU 3·16·24 = 1152 -> 2 · 1920 = 3840.
  TomoeShape s{16, 4, 2, 4, 24};
  CHECK(total_parameters(s, 2) == 3840.0);
  auto full = [](double qk, double vo, double mlp) {
    return LayerWidths{torch::tensor(qk, torch::kDouble), torch::tensor(vo, torch::kDouble), torch::tensor(mlp, torch::kDouble)};
  };
  CHECK(active_parameters(s, {full(4, 4, 24), full(4, 4, 24)}).item<double>() == 3840.0);
  // Layer 0 keeps q/k 2, v/o 3, MLP 12: 96·2 + 96·3 + 48·12 = 192 + 288 + 576 = 1056; layer 1 full 1920.
  auto t = active_parameters(s, {full(2, 3, 12), full(4, 4, 24)});
  CHECK(t.item<double>() == 2976.0);
  // R_P at p = 0.5: f(2976, 1920) = log(2976 / 1920) = 0.438255; at p = 1: log(3840 / 2976) = 0.254892.
  CHECK(parameter_regulariser(t, 3840, 0.5).item<double>() == Approx(0.438255).margin(1e-6));
  CHECK(parameter_regulariser(t, 3840, 1.0).item<double>() == Approx(0.254892).margin(1e-6));
  CHECK_THROWS_AS(parameter_regulariser(t, 3840, 0.0), Error);
}
