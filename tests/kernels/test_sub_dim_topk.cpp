// MoHD's one-pass routing after the centroid scores (kernels/sparse/sub_dim_topk.h, Eqs. 11-12 and Sec. 4.2's
// scaling) against softmax / top-k / scatter in float64, on every ISA variant.
#include <tuple>
#include <vector>

#include "kernels/sparse/sub_dim_topk.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;
using moxlab::test::for_each_isa;

namespace {
// probs = softmax(logits); active = the first `shared` and the top `routed` of the rest by probs;
// gates = probs where active; weights = gates * N * sum(gates) (n_sum), gates * K / sum(gates) (k_over_sum),
// gates without scaling.
SubDimTopK reference(const torch::Tensor& logits, int shared, int routed, GateScaling scaling) {
  const auto n = logits.size(-1);
  const auto probs = torch::softmax(d64(logits), -1);
  auto active = torch::zeros_like(probs, torch::kBool);
  active.narrow(-1, 0, shared).fill_(true);
  const auto rest = probs.narrow(-1, shared, n - shared);
  active.narrow(-1, shared, n - shared).scatter_(-1, std::get<1>(rest.topk(routed, -1)), true);
  const auto gates = probs * active;
  const auto sum = gates.sum(-1, true);
  const auto weights = scaling == GateScaling::n_sum       ? gates * (static_cast<double>(n) * sum)
                       : scaling == GateScaling::k_over_sum ? gates * (static_cast<double>(shared + routed) / sum)
                                                            : gates;
  return {probs, active, gates, weights};
}
}  // namespace

TEST_CASE("MoHD's fused routing equals softmax, top-k of the routed sub-dimensions and the scaling", "[kernels][mohd]") {
  torch::NoGradGuard no_grad;
  torch::manual_seed(21);
  // (N, shared, routed): 8-wide score vectors whole, padded (12, 5) and past 16; no shared; scaling on and off.
  const std::vector<std::tuple<int, int, int>> shapes = {{4, 1, 1}, {5, 0, 2}, {8, 2, 3}, {12, 3, 6}, {16, 4, 4}, {24, 0, 12}};
  for_each_isa([&] {
    for (const auto& [n, shared, routed] : shapes)
      for (const GateScaling scaling : {GateScaling::n_sum, GateScaling::k_over_sum, GateScaling::none}) {
        INFO("N " << n << " shared " << shared << " routed " << routed << " scaling " << static_cast<int>(scaling));
        const auto logits = torch::randn({37, n}) * 3;
        const auto got = sub_dim_top_k(logits, shared, routed, scaling), want = reference(logits, shared, routed, scaling);
        CHECK(torch::equal(got.active, want.active));
        CHECK(close_to(got.probs, want.probs, 1e-5, 1e-6));
        CHECK(close_to(got.gates, want.gates, 1e-5, 1e-6));
        CHECK(close_to(got.weights, want.weights, 1e-5, 1e-6));
        // From the router's input and packed centroids: logits x phi^T, then the same routing.
        const auto x = torch::randn({37, 21}), phi = torch::randn({n, 21});
        REQUIRE(sub_dim_route_fusable(x, phi));
        const auto routed_x = sub_dim_route(x, packed_weight(pack_weight(phi), n), shared, routed, scaling);
        const auto want_x = reference(x.mm(phi.t()), shared, routed, scaling);
        CHECK(torch::equal(routed_x.active, want_x.active));
        CHECK(close_to(routed_x.weights, want_x.weights, 1e-4, 1e-5));
      }
  });
}
