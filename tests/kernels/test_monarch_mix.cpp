// Monarch's second factor applied row by row (kernels/sparse/monarch_mix.h, MoHD Eq. 9) against the
// batched einsum, on every ISA variant (16-float vectors with AVX-512, 8-float ones, the column tail).
#include <utility>
#include <vector>

#include "kernels/sparse/monarch_mix.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::for_each_isa;

namespace {
bool close(const torch::Tensor& a, const torch::Tensor& b) { return close_to(a, b, 1e-4, 1e-5); }
}  // namespace

TEST_CASE("Monarch column mix on 16- and 8-float vectors and the column tail equals the batched form (Eq. 9)", "[kernels][mohd]") {
  torch::manual_seed(11);
  for_each_isa([] {
    // r = 48: three 16-float vectors; 40: 16 + 16 + 8 (or five 8s); 21: vectors and 5 single columns; 4: columns only.
    for (const auto [groups, r] : std::vector<std::pair<int, int>>{{8, 48}, {5, 40}, {3, 21}, {6, 4}}) {
      INFO("groups " << groups << ", r " << r);
      const auto b2 = torch::randn({r, groups, groups}), x = torch::randn({7, groups * r});
      // y[n, k, c] = sum_j b2[c, k, j] x[n, j, c]
      const auto reference = torch::einsum("ckj,njc->nkc", {b2, x.view({7, groups, r})}).reshape({7, groups * r});
      CHECK(close(monarch_column_mix(x, b2), reference));
      // One row from two of its groups, scaled (MoHD's active blocks with their gates): groups 1 and the last.
      const auto bt = monarch_mix_weights(b2);
      const std::vector<MixInput> in = {{1, x[0].data_ptr<float>() + r, 0.5f}, {groups - 1, x[0].data_ptr<float>() + (groups - 1) * r, -2.0f}};
      auto y = torch::empty({groups * r});
      monarch_mix_row(in.data(), 2, bt.data_ptr<float>(), y.data_ptr<float>(), groups, r);
      auto masked = torch::zeros({1, groups, r});
      masked[0][1] = 0.5f * x[0].view({groups, r})[1];
      masked[0][groups - 1] = -2.0f * x[0].view({groups, r})[groups - 1];
      CHECK(close(y, torch::einsum("ckj,njc->nkc", {b2, masked}).reshape({groups * r})));
    }
  });
}

