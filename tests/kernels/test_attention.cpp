// The one-pass inference attention (kernels/fused/attention.h) against per-position softmax attention
// computed in float64, on every ISA variant.
#include <ATen/Parallel.h>

#include <cmath>

#include "kernels/fused/attention.h"
#include "tests/kernels/isa_cross_check.h"

using namespace moxlab;
using moxlab::test::close_to;
using moxlab::test::for_each_isa;

namespace {

// Query t (key position Tk - T + t when causal) of head h: softmax(q k_u * scale) over the keys it sees,
// mixing v; grouped-query heads h -> h / (H / Hkv). float64 throughout.
torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal,
                                  double scale) {
  const auto qd = q.to(torch::kDouble), kd = k.to(torch::kDouble), vd = v.to(torch::kDouble);
  const auto B = q.size(0), H = q.size(1), T = q.size(2), Hkv = k.size(1), Tk = k.size(2);
  auto out = torch::empty({B, H, T, v.size(3)}, torch::kDouble);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t) {
      const auto seen = causal ? Tk - T + t + 1 : Tk;
      const auto g = h / (H / Hkv);
      auto keys = kd.select(1, g).narrow(1, 0, seen), vals = vd.select(1, g).narrow(1, 0, seen);
      auto p = torch::softmax((keys * qd.select(1, h).narrow(1, t, 1)).sum(-1) * scale, -1);  // [B, seen]
      out.select(1, h).select(1, t).copy_((p.unsqueeze(-1) * vals).sum(1));
    }
  return out.to(torch::kFloat);
}

}  // namespace

TEST_CASE("The fused attention's exponential is accurate to float rounding over the softmax's range", "[kernels]") {
  for_each_isa([] {
    double worst = 0;
    for (float x = -87.0f; x <= 0.0f; x += 0.0137f) worst = std::max(worst, std::abs(attention_exp(x) / std::exp(double(x)) - 1));
    CHECK(worst < 3e-7);
    CHECK(attention_exp(0.0f) == 1.0f);
    CHECK(attention_exp(-1000.0f) < 1e-37f);  // clamped, never NaN or negative
    CHECK(attention_exp(-1000.0f) >= 0.0f);
  });
}

TEST_CASE("Fused attention equals per-position softmax attention", "[kernels]") {
  torch::NoGradGuard no_grad;
  torch::manual_seed(11);
  struct Shape {
    int B, H, Hkv, T, past, hq, hd;
    bool causal;
  };
  // Tile edges (1, 15, 16, 17, 63, 65 positions), groups of 1 / 2 / 3 / 4 query heads per key/value head
  // (3: blocks of four rows cross positions), value widths of one vector, 48, 56 (a 48-column chunk and a
  // one-vector chunk) and 64, narrower q/k than v (ToMoE's kept pairs), cached keys, and no mask (ViT).
  const Shape shapes[] = {{1, 1, 1, 1, 0, 8, 8, true},    {2, 4, 2, 15, 0, 6, 8, true},     {2, 8, 2, 17, 3, 48, 48, true},
                          {1, 6, 2, 65, 0, 24, 48, true}, {1, 3, 1, 63, 7, 16, 56, true},   {2, 4, 4, 16, 0, 64, 64, true},
                          {1, 4, 2, 1, 40, 48, 48, true}, {2, 4, 2, 33, 0, 12, 16, false}, {1, 2, 1, 7, 5, 8, 8, false}};
  for (const auto& s : shapes) {
    INFO("B " << s.B << " H " << s.H << "/" << s.Hkv << " T " << s.T << " past " << s.past << " hq " << s.hq << " hd " << s.hd
              << (s.causal ? " causal" : " full"));
    const int Tk = s.T + s.past;
    // Token-major tensors viewed head-major, as the attention modules pass them.
    auto q = torch::randn({s.B, s.T, s.H, s.hq}).transpose(1, 2);
    auto k = torch::randn({s.B, Tk, s.Hkv, s.hq}).transpose(1, 2);
    auto v = torch::randn({s.B, Tk, s.Hkv, s.hd}).transpose(1, 2);
    REQUIRE(attention_fusable(q, k, v));
    const double scale = 1.0 / std::sqrt(double(s.hd));  // not 1/sqrt(hq): the scale is the caller's
    const auto ref = reference_attention(q, k, v, s.causal, scale);
    // Sixteen-float vectors (AVX-512, value widths that are multiples of 16) and eight-float ones; one
    // thread, and two: the (batch, KV head) pairs split between them where two divide them, the work items
    // handed out dynamically where not.
    const int before = at::get_num_threads();
    for (int threads : {1, 2}) {
      at::set_num_threads(threads);
      INFO(threads << " threads");
      for_each_isa([&] {
        const auto out = attention_inference(q, k, v, s.causal, scale);
        CHECK(out.sizes() == torch::IntArrayRef({s.B, s.H, s.T, s.hd}));
        CHECK(out.transpose(1, 2).is_contiguous());  // [B, T, H, hd] for the output projection
        CHECK(close_to(out, ref, 1e-5, 1e-5));
      });
    }
    at::set_num_threads(before);
  }
}

TEST_CASE("Fused attention on rows in another order equals it in token order", "[kernels]") {
  torch::NoGradGuard no_grad;
  torch::manual_seed(13);
  const int B = 3, T = 37, H = 4, Hkv = 2, hd = 16;
  // Token-major q, k, v [B, T, heads, hd]; the rows hold token order[r] (a random permutation).
  auto q = torch::randn({B, T, H, hd}), k = torch::randn({B, T, Hkv, hd}), v = torch::randn({B, T, Hkv, hd});
  const auto order = torch::randperm(B * T, torch::kLong);
  const auto row_of_token = torch::empty_like(order).index_copy_(0, order, torch::arange(B * T, torch::kLong));
  auto rows = [&](const torch::Tensor& t) { return t.reshape({B * T, t.size(2), hd}).index_select(0, order); };
  for (bool causal : {true, false}) {
    INFO((causal ? "causal" : "full"));
    const auto expect = attention_inference(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal, 0.25)
                            .transpose(1, 2)
                            .reshape({B * T, H * hd})
                            .index_select(0, order);
    REQUIRE(attention_rows_fusable(rows(q), rows(k), rows(v)));
    CHECK(close_to(attention_inference_rows(rows(q), rows(k), rows(v), row_of_token, B, causal, 0.25), expect, 1e-6, 1e-6));
  }
  CHECK_THROWS(attention_inference_rows(rows(q), rows(k), rows(v), row_of_token.narrow(0, 0, 5), B, true, 0.25));
}
