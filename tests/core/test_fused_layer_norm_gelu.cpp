// The fused LayerNorm + exact GeLU of ToMoE's v/o router (kernels/fused/layer_norm_gelu.h): hand-computed
// values, and torch's layer_norm then gelu on strided rows with vector-wide and tail widths.
#include "tests/core/torch_catch.h"

#include "kernels/fused/layer_norm_gelu.h"

using namespace moxlab;

TEST_CASE("Fused LayerNorm + GeLU: hand-computed values and torch's two ops", "[kernels][tomoe]") {
  // Row (-1, 1) x 4 (vector path) and (1, 3) (scalar tail): mean 0 / 2, biased variance 1, so LN gives
  // -1 and +1 (w = 1, b = 0, eps = 0); GeLU(-1) = -Phi(-1) = -0.158655, GeLU(1) = Phi(1) = 0.841345.
  std::vector<float> x = {-1, 1, -1, 1, -1, 1, -1, 1, /*stride padding*/ 9, 1, 3};
  const std::vector<float> ones(8, 1.0f), zeros(8, 0.0f);
  layer_norm_gelu_rows(x.data(), 1, 0, 8, ones.data(), zeros.data(), 0.0f);
  layer_norm_gelu_rows(x.data() + 9, 1, 0, 2, ones.data(), zeros.data(), 0.0f);
  for (int i = 0; i < 8; ++i) CHECK(x[i] == Approx(i % 2 ? 0.841345 : -0.158655).epsilon(1e-5));
  CHECK(x[8] == 9.0f);  // outside the rows: untouched
  CHECK(x[9] == Approx(-0.158655).epsilon(1e-5));
  CHECK(x[10] == Approx(0.841345).epsilon(1e-5));

  torch::manual_seed(3);
  for (const int n : {128, 13}) {
    INFO("n " << n);
    auto all = torch::randn({5, n + 7}) * 3;  // rows of a wider product: the slice is strided
    const auto w = torch::randn({n}), b = torch::randn({n});
    const auto expected = torch::gelu(torch::layer_norm(all.narrow(1, 4, n), {n}, w, b, 1e-5));
    layer_norm_gelu_rows(all.data_ptr<float>() + 4, 5, n + 7, n, w.data_ptr<float>(), b.data_ptr<float>(), 1e-5f);
    CHECK(torch::allclose(all.narrow(1, 4, n), expected, 1e-5, 1e-6));
  }
}
