// Model formulas against hand-computed values: RMSNorm, RoPE, grouped-query attention, SwiGLU,
// parameter accounting, the LM loss and generation.
#include "tests/torch_catch.h"

#include <cmath>

#include "core/engine/generate.h"
#include "core/model/param_count.h"
#include "core/model/transformer.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

namespace {
ModelOptions micro_options() {
  ModelOptions o = test::tiny_model(8, 10);
  o.n_heads = 2;
  o.n_kv_heads = 1;
  return o;
}
}  // namespace

TEST_CASE("RMSNorm matches x / sqrt(mean(x^2) + eps) * g", "[model]") {
  RMSNorm norm(2, 0.0);
  norm->weight.data().copy_(torch::tensor({1.0f, 2.0f}));
  auto y = norm(torch::tensor({{3.0f, 4.0f}}));
  // rms = sqrt((9 + 16) / 2) = 3.5355339
  CHECK(y[0][0].item<float>() == Approx(3.0 / 3.5355339).epsilon(1e-6));
  CHECK(y[0][1].item<float>() == Approx(2.0 * 4.0 / 3.5355339).epsilon(1e-6));
}

TEST_CASE("RoPE rotates consecutive pairs by pos * theta^(-2i/d)", "[model]") {
  Rope rope(4, 8, 10000.0);
  // x at positions 0 and 1, one head: pairs (1, 0) and (0, 1).
  auto x = torch::tensor({1.0f, 0.0f, 0.0f, 1.0f}).view({1, 1, 1, 4}).repeat({1, 2, 1, 1});
  auto y = rope.apply(x);
  // position 0: identity
  CHECK(torch::allclose(y[0][0][0], torch::tensor({1.0f, 0.0f, 0.0f, 1.0f})));
  // position 1: pair 0 by 1 rad; pair 1 by 10000^(-2/4) = 0.01 rad
  auto p1 = y[0][1][0];
  CHECK(p1[0].item<float>() == Approx(std::cos(1.0)).epsilon(1e-6));
  CHECK(p1[1].item<float>() == Approx(std::sin(1.0)).epsilon(1e-6));
  CHECK(p1[2].item<float>() == Approx(-std::sin(0.01)).epsilon(1e-5));
  CHECK(p1[3].item<float>() == Approx(std::cos(0.01)).epsilon(1e-6));
  // rotation keeps norms
  CHECK(y.norm().item<float>() == Approx(x.norm().item<float>()));
}

TEST_CASE("Grouped-query attention equals attention with explicitly shared K/V heads", "[model]") {
  torch::manual_seed(3);
  ModelOptions o = micro_options();
  o.n_heads = 4;
  o.n_kv_heads = 2;
  DenseAttention attn(o);
  Rope rope(o.head_dim(), o.max_seq_len, o.rope_theta);
  auto x = torch::randn({1, 5, o.dim});
  Analysis an;
  BlockTapNames taps(0);
  LayerIO io;
  auto y = attn.forward(x, rope, an, taps, io);

  // Reference: per head h, K/V head h / 2, explicit softmax over positions <= t.
  const int hd = o.head_dim();
  auto q = rope.apply(attn.wq(x).view({1, 5, 4, hd}))[0];
  auto k = rope.apply(attn.wk(x).view({1, 5, 2, hd}))[0];
  auto v = attn.wv(x).view({5, 2, hd});
  auto ctx_ref = torch::zeros({5, 4, hd});
  for (int h = 0; h < 4; ++h)
    for (int t = 0; t < 5; ++t) {
      auto s = torch::zeros({t + 1});
      for (int u = 0; u <= t; ++u) s[u] = (q[t][h] * k[u][h / 2]).sum() / std::sqrt(double(hd));
      auto p = torch::softmax(s, 0);
      for (int u = 0; u <= t; ++u) ctx_ref[t][h] += p[u] * v[u][h / 2];
    }
  auto y_ref = attn.wo(ctx_ref.view({1, 5, 4 * hd}));
  CHECK(torch::allclose(y, y_ref, 1e-5, 1e-6));
}

TEST_CASE("Causal attention in query tiles equals per-position softmax, with and without cached keys", "[model]") {
  // Lengths around the 64-position tile (one tile, a full tile, a partial last tile, several tiles) and
  // 0 or 7 earlier positions whose keys come first (a KV cache); 4 query heads on 2 key/value heads.
  torch::manual_seed(5);
  const int B = 2, H = 4, Hkv = 2, hd = 6;
  for (int T : {1, 63, 64, 65, 150}) {
    for (int past : {0, 7}) {
      INFO("T " << T << ", past " << past);
      const int Tk = T + past;
      auto q = torch::randn({B, H, T, hd}), k = torch::randn({B, Hkv, Tk, hd}), v = torch::randn({B, Hkv, Tk, hd});
      const auto out = dot_product_attention(q, k, v, true);
      // Reference: query t at key position past + t sees keys 0 .. past + t, softmax(q k / sqrt(hd)) v.
      auto ref = torch::empty({B, H, T, hd});
      for (int h = 0; h < H; ++h)
        for (int t = 0; t < T; ++t) {
          auto keys = k.select(1, h / 2).narrow(1, 0, past + t + 1), vals = v.select(1, h / 2).narrow(1, 0, past + t + 1);
          auto p = torch::softmax((keys * q.select(1, h).narrow(1, t, 1)).sum(-1) / std::sqrt(double(hd)), -1);  // [B, keys]
          ref.select(1, h).select(1, t).copy_((p.unsqueeze(-1) * vals).sum(1));
        }
      CHECK(torch::allclose(out, ref, 1e-5, 1e-5));
    }
  }
}

TEST_CASE("The decoder is causal: later tokens never change earlier logits", "[model]") {
  torch::manual_seed(4);
  Transformer m(micro_options());
  m.init_weights(4);
  auto a = torch::tensor({{1, 2, 3, 4, 5}}, torch::kLong);
  auto b = torch::tensor({{1, 2, 3, 9, 0}}, torch::kLong);
  auto la = m.forward(a), lb = m.forward(b);
  CHECK(torch::allclose(la.narrow(1, 0, 3), lb.narrow(1, 0, 3)));
  CHECK_FALSE(torch::allclose(la.narrow(1, 3, 1), lb.narrow(1, 3, 1)));
}

TEST_CASE("SwiGLU computes W2(SiLU(W1 x) * W3 x) and taps its pieces", "[model]") {
  ModelOptions o = micro_options();
  o.dim = 1;
  o.ffn_hidden = 1;
  SwiGLU f(o);
  f.w1->weight.data().fill_(2.0);
  f.w3->weight.data().fill_(3.0);
  f.w2->weight.data().fill_(0.5);
  TapRecorder rec("blocks.0.ffn.*");
  Analysis an;
  an.tap_recorder = &rec;
  LayerIO io;
  auto y = f.forward(torch::full({1, 1, 1}, 1.0), an, BlockTapNames(0), io);
  const double silu2 = 2.0 / (1.0 + std::exp(-2.0));  // SiLU(2)
  CHECK(y.item<float>() == Approx(0.5 * silu2 * 3.0).epsilon(1e-6));
  auto taps = rec.take();
  CHECK(taps.size() == 5);  // in, gate, up, act, out
  CHECK(taps.at("blocks.0.ffn.act").item<float>() == Approx(silu2 * 3.0).epsilon(1e-6));
}

TEST_CASE("Active-parameter accounting excludes embeddings and matches a hand count", "[model]") {
  ModelOptions o = micro_options();
  Transformer tied(o);
  // per block: wq 8x8 + wk 4x8 + wv 4x8 + wo 8x8 = 192; SwiGLU 3 * 8 * 16 = 384; two norms 16
  // two blocks + final norm 8 = 2 * 592 + 8 = 1192
  ParamCount c = count_parameters(tied);
  CHECK(c.total == 1192);
  CHECK(c.active == 1192);
  o.tie_embeddings = false;
  Transformer untied(o);
  CHECK(count_parameters(untied).total == 1192);  // output head excluded too
  std::int64_t all = 0;
  for (auto& p : untied.parameters()) all += p.numel();
  CHECK(all == 1192 + 2 * 10 * 8);
}

TEST_CASE("Probe taps are selected by glob and cost nothing when disabled", "[model][probe]") {
  CHECK(tap_selected("blocks.*.attn.out", "blocks.3.attn.out"));
  CHECK_FALSE(tap_selected("blocks.*.attn.out", "blocks.3.attn.outx"));
  CHECK(tap_selected("blocks.0.ffn.in, blocks.1.*", "blocks.1.resid.mid"));
  CHECK(dense_tap_names(2).size() == 26);
  Transformer m(micro_options());
  m.init_weights(1);
  TapRecorder rec("blocks.1.attn.*,blocks.0.resid.out");
  Analysis an;
  an.tap_recorder = &rec;
  m.forward(torch::tensor({{1, 2, 3}}, torch::kLong), an);
  auto taps = rec.take();
  CHECK(taps.size() == 7);
  CHECK(taps.at("blocks.1.attn.q").sizes() == torch::IntArrayRef({1, 3, 8}));
  CHECK(taps.at("blocks.1.attn.k").sizes() == torch::IntArrayRef({1, 3, 4}));
}

TEST_CASE("LM loss of uniform logits is ln(V)", "[model]") {
  auto logits = torch::zeros({2, 3, 10});
  auto targets = torch::tensor({{1, 2, 3}, {4, 5, -1}}, torch::kLong);
  CHECK(Transformer::lm_loss(logits, targets).item<float>() == Approx(std::log(10.0)));
}

TEST_CASE("Greedy generation is deterministic and stops at a stop token", "[model]") {
  Transformer m(micro_options());
  m.init_weights(7);
  GenerateOptions g;
  g.max_new_tokens = 6;
  InferencePlan plan(m);
  auto a = generate(plan, {1, 2}, g);
  auto b = generate(plan, {1, 2}, g);
  CHECK(a == b);
  CHECK(a.size() == 6);
  g.stop_ids = {a[2]};
  auto c = generate(plan, {1, 2}, g);
  CHECK(c.size() <= 2);
}
