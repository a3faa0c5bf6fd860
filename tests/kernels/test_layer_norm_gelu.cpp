// The fused LayerNorm + exact GeLU of ToMoE's v/o router (kernels/fused/layer_norm_gelu.h): hand-computed
// values, and torch's layer_norm then gelu on strided rows with vector-wide and tail widths, on every ISA
// variant (16-float vectors with AVX-512, 8-float ones otherwise).
#include "kernels/fused/layer_norm_gelu.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;

TEST_CASE("Fused LayerNorm + GeLU: hand-computed values and torch's two ops", "[kernels][tomoe]") {
  moxlab::test::for_each_isa([] {
    // Row (-1, 1) x 8 (vector path) and (1, 3) (scalar tail): mean 0 / 2, biased variance 1, so LN gives
    // -1 and +1 (w = 1, b = 0, eps = 0); GeLU(-1) = -Phi(-1) = -0.158655, GeLU(1) = Phi(1) = 0.841345.
    std::vector<float> x = {-1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, /*stride padding*/ 9, 1, 3};
    const std::vector<float> ones(16, 1.0f), zeros(16, 0.0f);
    layer_norm_gelu_rows(x.data(), 1, 0, 16, ones.data(), zeros.data(), 0.0f);
    layer_norm_gelu_rows(x.data() + 17, 1, 0, 2, ones.data(), zeros.data(), 0.0f);
    for (int i = 0; i < 16; ++i) CHECK(x[i] == Approx(i % 2 ? 0.841345 : -0.158655).epsilon(1e-5));
    CHECK(x[16] == 9.0f);  // outside the rows: untouched
    CHECK(x[17] == Approx(-0.158655).epsilon(1e-5));
    CHECK(x[18] == Approx(0.841345).epsilon(1e-5));

    torch::manual_seed(3);
    for (const int n : {128, 13, 21}) {  // whole vectors; vectors and a tail (13 on 8 lanes, 21 on both)
      INFO("n " << n);
      auto all = torch::randn({5, n + 7}) * 3;  // rows of a wider product: the slice is strided
      const auto w = torch::randn({n}), b = torch::randn({n});
      const auto expected = torch::gelu(torch::layer_norm(all.narrow(1, 4, n), {n}, w, b, 1e-5));
      layer_norm_gelu_rows(all.data_ptr<float>() + 4, 5, n + 7, n, w.data_ptr<float>(), b.data_ptr<float>(), 1e-5f);
      CHECK(moxlab::test::close_to(all.narrow(1, 4, n), expected, 1e-5, 1e-6));
    }
  });
}
