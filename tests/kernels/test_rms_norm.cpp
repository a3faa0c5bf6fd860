// The one-pass RMSNorm and residual add + RMSNorm (kernels/fused/rms_norm.h) by hand and against
// x / sqrt(mean(x^2) + eps) * w in float64, on every ISA variant and row widths around the vector width.
#include "kernels/fused/rms_norm.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;
using moxlab::test::edge_sizes;
using moxlab::test::for_each_isa;

namespace {
torch::Tensor reference(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  return d64(x) / (d64(x).pow(2).mean(-1, true) + eps).sqrt() * d64(w);
}
}  // namespace

TEST_CASE("Fused RMSNorm: by hand and against the formula at every row width", "[kernels]") {
  torch::NoGradGuard no_grad;
  for_each_isa([] {
    // x = (3, 4), w = (1, 2), eps 0: rms = sqrt((9 + 16) / 2) = 3.5355339; y = (3, 8) / 3.5355339.
    const auto hand = rms_norm_inference(torch::tensor({{3.0f, 4.0f}}), torch::tensor({1.0f, 2.0f}), 0.0);
    CHECK(hand[0][0].item<float>() == Approx(3.0 / 3.5355339).epsilon(1e-6));
    CHECK(hand[0][1].item<float>() == Approx(8.0 / 3.5355339).epsilon(1e-6));
    torch::manual_seed(3);
    for (const auto d : edge_sizes()) {
      INFO("d " << d);
      const auto x = torch::randn({3, 5, d}) * 2, a = torch::randn({3, 5, d}), w = torch::rand({d}) + 0.5;
      CHECK(close_to(rms_norm_inference(x, w, 1e-5), reference(x, w, 1e-5), 1e-5, 1e-6));
      const auto [sum, normed] = add_rms_norm_inference(x, a, w, 1e-5);
      CHECK(torch::equal(sum, x + a));  // one float add per element, as torch's
      CHECK(close_to(normed, reference(x + a, w, 1e-5), 1e-5, 1e-6));
    }
  });
}

TEST_CASE("Fused RMSNorm applies only without autograd to float32 rows of the weight's width", "[kernels]") {
  const auto x = torch::randn({2, 8}), w = torch::ones({8});
  CHECK_FALSE(rms_norm_fusable(x, w));  // autograd on
  torch::NoGradGuard no_grad;
  CHECK(rms_norm_fusable(x, w));
  CHECK_FALSE(rms_norm_fusable(x.to(torch::kDouble), w));
  CHECK_FALSE(rms_norm_fusable(x.t(), torch::ones({2})));  // rows not contiguous
  CHECK_THROWS(rms_norm_inference(x, torch::ones({7}), 1e-5));
  CHECK_THROWS(add_rms_norm_inference(x, torch::randn({2, 4}), w, 1e-5));
}
