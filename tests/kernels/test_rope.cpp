// One-pass RoPE (kernels/fused/rope.h) by hand and against the pair rotation in float64, on every ISA
// variant: head widths whose pairs fill 8-float vectors and leave tails, strided inputs, a start position
// (a KV cache) and per-row positions.
#include <cmath>

#include "kernels/fused/rope.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;
using moxlab::test::for_each_isa;

namespace {
// cos / sin [positions, hd / 2] of angle pos * theta^(-2i / hd) (LLaMA's consecutive-pair convention).
std::pair<torch::Tensor, torch::Tensor> tables(std::int64_t positions, std::int64_t hd) {
  const auto freq = torch::pow(10000.0, -torch::arange(0, hd, 2, torch::kDouble) / static_cast<double>(hd));
  const auto angle = torch::arange(positions, torch::kDouble).unsqueeze(1) * freq;
  return {angle.cos().to(torch::kFloat), angle.sin().to(torch::kFloat)};
}
// x [B, T, H, hd] with row (b, t) at pos[b, t]: (x0 c - x1 s, x0 s + x1 c) per pair, in float64.
torch::Tensor reference(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, const torch::Tensor& pos) {
  const auto B = x.size(0), T = x.size(1), H = x.size(2), hd = x.size(3);
  const auto pairs = d64(x).reshape({B, T, H, hd / 2, 2});
  const auto c = d64(cos).index_select(0, pos.flatten()).view({B, T, 1, hd / 2});
  const auto s = d64(sin).index_select(0, pos.flatten()).view({B, T, 1, hd / 2});
  const auto x0 = pairs.select(-1, 0), x1 = pairs.select(-1, 1);
  return torch::stack({x0 * c - x1 * s, x0 * s + x1 * c}, -1).view({B, T, H, hd});
}
}  // namespace

TEST_CASE("Fused RoPE rotates each pair by its position's angle, by hand and at every head width", "[kernels]") {
  torch::NoGradGuard no_grad;
  for_each_isa([] {
    // hd = 4 at position 1: pair 0 by 1 rad, pair 1 by 10000^(-2/4) = 0.01 rad.
    const auto [c4, s4] = tables(8, 4);
    const auto y = rope_inference(torch::tensor({1.0f, 0.0f, 0.0f, 1.0f}).view({1, 1, 1, 4}), c4, s4, 1);
    CHECK(y[0][0][0][0].item<float>() == Approx(std::cos(1.0)).epsilon(1e-6));
    CHECK(y[0][0][0][1].item<float>() == Approx(std::sin(1.0)).epsilon(1e-6));
    CHECK(y[0][0][0][2].item<float>() == Approx(-std::sin(0.01)).epsilon(1e-5));
    CHECK(y[0][0][0][3].item<float>() == Approx(std::cos(0.01)).epsilon(1e-6));
    torch::manual_seed(8);
    for (const std::int64_t hd : {2, 6, 16, 20, 34, 48}) {
      INFO("hd " << hd);
      const auto [cos, sin] = tables(32, hd);
      const auto x = torch::randn({2, 5, 3, hd}).narrow(2, 1, 2);  // a strided view (a slice of one Q/K/V product)
      const auto start = torch::arange(3, 8, torch::kLong).repeat({2, 1});
      CHECK(close_to(rope_inference(x, cos, sin, 3), reference(x, cos, sin, start), 1e-6, 1e-6));
      const auto pos = torch::randint(0, 32, {2, 5}, torch::kLong);
      CHECK(close_to(rope_inference(x, cos, sin, 0, pos.flatten()), reference(x, cos, sin, pos), 1e-6, 1e-6));
    }
  });
}

TEST_CASE("Fused RoPE refuses positions past its tables and odd head widths", "[kernels]") {
  torch::NoGradGuard no_grad;
  const auto [cos, sin] = tables(8, 4);
  const auto x = torch::randn({1, 3, 2, 4});
  CHECK_THROWS(rope_inference(x, cos, sin, 6));  // positions 6..8, tables hold 0..7
  CHECK_THROWS(rope_inference(x, cos, sin, 0, torch::tensor({0, 1, 9}, torch::kLong)));
  CHECK_FALSE(rope_fusable(torch::randn({1, 3, 2, 5}), cos));
}
