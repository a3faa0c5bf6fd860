// The training attention (core/engine/training_attention.h on kernels/fused/attention_training.h):
// forward and the three gradients equal the torch form's in float64 on every ISA, causal and not, with
// grouped-query heads and lengths around the kernels' panel (16) and query-chunk (64) widths; central
// finite differences of a nonlinear loss through the custom backward; hand values for one query.
#include "tests/torch_catch.h"

#include "core/engine/training_attention.h"
#include "core/model/attention.h"
#include "tests/engine/finite_differences.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::d64;
using moxlab::test::for_each_isa;

TEST_CASE("training attention: hand values of one query over two keys", "[engine]") {
  // q = (1, 0), keys (1, 0) and (0, 1), scale 1: softmax(1, 0) = (e / (e + 1), 1 / (e + 1)).
  const auto q = torch::tensor({1.0f, 0.0f}).view({1, 1, 1, 2}).expand({1, 1, 2, 2}).contiguous();
  const auto k = torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}}).view({1, 1, 2, 2});
  const auto v = torch::tensor({{2.0f, 0.0f}, {0.0f, 4.0f}}).view({1, 1, 2, 2});
  const auto out = engine::training_attention(q, k, v, /*causal=*/true, 1.0);
  const double p = std::exp(1.0) / (std::exp(1.0) + 1);
  // Query 0 sees key 0 only: v_0. Query 1 sees both: p v_0 + (1 - p) v_1.
  CHECK(out[0][0][0][0].item<double>() == Approx(2.0));
  CHECK(out[0][0][0][1].item<double>() == Approx(0.0));
  CHECK(out[0][0][1][0].item<double>() == Approx(2 * p).epsilon(1e-6));
  CHECK(out[0][0][1][1].item<double>() == Approx(4 * (1 - p)).epsilon(1e-6));
}

TEST_CASE("training attention: forward and gradients equal float64 torch attention on every ISA", "[engine]") {
  struct Shape {
    std::int64_t B, H, Hkv, T, hq, hd;
    bool causal;
  };
  for (const Shape& s : {Shape{2, 4, 2, 70, 16, 16, true}, Shape{1, 3, 1, 5, 8, 20, true}, Shape{2, 2, 2, 33, 20, 8, false},
                         Shape{1, 6, 3, 130, 32, 32, true}}) {
    torch::manual_seed(17);
    // [B, T, heads, d] storage seen as [B, heads, T, d], as the model passes them.
    const auto q = torch::randn({s.B, s.T, s.H, s.hq}).transpose(1, 2), k = torch::randn({s.B, s.T, s.Hkv, s.hq}).transpose(1, 2),
               v = torch::randn({s.B, s.T, s.Hkv, s.hd}).transpose(1, 2), d_out = torch::randn({s.B, s.H, s.T, s.hd});
    auto qr = d64(q).requires_grad_(), kr = d64(k).requires_grad_(), vr = d64(v).requires_grad_();
    const auto want = dot_product_attention_torch(qr, kr, vr, s.causal, 0.3);
    want.backward(d64(d_out));
    for_each_isa([&] {
      INFO("B " << s.B << " H " << s.H << "/" << s.Hkv << " T " << s.T << " hq " << s.hq << " hd " << s.hd << " causal " << s.causal);
      auto qp = q.detach().requires_grad_(), kp = k.detach().requires_grad_(), vp = v.detach().requires_grad_();
      const auto got = engine::training_attention(qp, kp, vp, s.causal, 0.3);
      REQUIRE(got.defined());
      got.backward(d_out);
      CHECK(close_to(got, want, 1e-5, 1e-5));
      CHECK(close_to(qp.grad(), qr.grad(), 1e-4, 1e-5));
      CHECK(close_to(kp.grad(), kr.grad(), 1e-4, 1e-5));
      CHECK(close_to(vp.grad(), vr.grad(), 1e-4, 1e-5));
    });
  }
}

TEST_CASE("training attention: the custom backward against central finite differences", "[engine]") {
  torch::manual_seed(21);
  const auto q = torch::randn({1, 2, 9, 8}), k = torch::randn({1, 1, 9, 8}), v = torch::randn({1, 1, 9, 8}), r = torch::randn({1, 2, 9, 8});
  const auto loss = [&](const std::vector<torch::Tensor>& in) {
    return (torch::tanh(engine::training_attention(in[0], in[1], in[2], true, 0.0)) * r).sum();
  };
  CHECK(moxlab::test::check_finite_differences(loss, {q, k, v}, 5, 1e-2, 3e-3) > 50);
}

TEST_CASE("training attention: operands the kernels do not take are left to the torch form", "[engine]") {
  const auto q = torch::randn({1, 2, 4, 8}, torch::kDouble), k = torch::randn({1, 1, 4, 8}, torch::kDouble);
  CHECK_FALSE(engine::training_attention(q, k, k, true, 0.0).defined());
  const auto qf = torch::randn({1, 2, 3, 8}), kf = torch::randn({1, 1, 5, 8});  // keys of another length (a cache)
  CHECK_FALSE(engine::training_attention(qf, kf, kf, true, 0.0).defined());
}
