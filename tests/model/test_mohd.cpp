// MoHD (arXiv 2412.05644) formulas against hand computations: the router (Eq. 11-12), the balance loss
// (Eq. 13), activation scaling (Sec. 4.2), Monarch fusion (Eq. 9) against the dense matrix built from
// the same blocks, the MoHD FFN against an explicit per-token slicing of the weight matrices, parameter
// accounting, and gradients reaching router and fusion in a model that trains.
#include "kernels/sparse/sub_dim_topk.h"
#include "tests/torch_catch.h"

#include "core/model/mohd/balance_loss.h"
#include "core/model/mohd/mohd_components.h"
#include "core/model/param_count.h"
#include "core/model/transformer.h"
#include "tests/model/mohd_support.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

using moxlab::testing::mohd;

TEST_CASE("MoHD router: softmax over centroids, shared always on, top-k of the rest (Eq. 11-12)", "[mohd]") {
  SubDimRouter router(2, mohd(4, 2, 1, 0));
  router->centroids->weight.data().copy_(torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}, {-1.0f, 0.0f}}));
  // x = (1, 2): logits x.phi_i = (1, 2, 3, -1); e^1 = 2.71828, e^2 = 7.38906, e^3 = 20.08554, e^-1 = 0.36788,
  // sum 30.56076 -> s = (0.088947, 0.241783, 0.657233, 0.012038).
  auto r = router(torch::tensor({{1.0f, 2.0f}}));
  const float s[] = {0.088947f, 0.241783f, 0.657233f, 0.012038f};
  for (int i = 0; i < 4; ++i) CHECK(r.probs[0][i].item<float>() == Approx(s[i]).epsilon(1e-4));
  // Sub-dimension 0 is shared; the top-1 of {1, 2, 3} is 2.
  CHECK(r.active[0][0].item<bool>());
  CHECK_FALSE(r.active[0][1].item<bool>());
  CHECK(r.active[0][2].item<bool>());
  CHECK_FALSE(r.active[0][3].item<bool>());
  CHECK(r.gates[0][0].item<float>() == Approx(s[0]).epsilon(1e-4));
  CHECK(r.gates[0][1].item<float>() == 0.0f);
  CHECK(r.gates[0][2].item<float>() == Approx(s[2]).epsilon(1e-4));
  // alpha = N * (s_0 + s_2) = 4 * 0.746180 = 2.984720: block weights s_0 alpha = 0.265483, s_2 alpha = 1.961648.
  CHECK(r.weights[0][0].item<float>() == Approx(0.265483).epsilon(1e-4));
  CHECK(r.weights[0][1].item<float>() == 0.0f);
  CHECK(r.weights[0][2].item<float>() == Approx(1.961648).epsilon(1e-4));
  {  // Without autograd the routing after the scores is one pass (kernels/sparse/sub_dim_topk): same values.
    torch::NoGradGuard ng;
    auto f = router(torch::tensor({{1.0f, 2.0f}}));
    for (const auto* name : {"probs", "gates", "weights"}) {
      INFO(name);
      const auto& got = std::string(name) == "probs" ? f.probs : std::string(name) == "gates" ? f.gates : f.weights;
      const auto& want = std::string(name) == "probs" ? r.probs : std::string(name) == "gates" ? r.gates : r.weights;
      CHECK(torch::allclose(got, want.detach(), 1e-5, 1e-6));
    }
    CHECK(f.active.equal(r.active));
    // Many tokens, 2 of 6 routed after 2 shared, without scaling: the torch form's results.
    SubDimRouter wide(5, mohd(8, 4, 2, 0, false));
    const auto x = torch::randn({3, 40, 5});
    const auto fast = wide(x);
    torch::AutoGradMode on(true);
    const auto ref = wide(x);
    CHECK(fast.active.equal(ref.active));
    CHECK(torch::allclose(fast.weights, ref.weights.detach(), 1e-5, 1e-6));
    CHECK(torch::allclose(fast.probs, ref.probs.detach(), 1e-5, 1e-6));
    // 12 sub-dimensions (two 8-wide score vectors, the second padded) over d = 37 (a tail after 4-wide steps).
    SubDimRouter twelve(37, mohd(12, 9, 3, 0));
    const auto x12 = torch::randn({2, 30, 37});
    torch::NoGradGuard off;
    REQUIRE(sub_dim_route_fusable(x12, twelve->centroids->weight));
    const auto fast12 = twelve(x12);
    torch::AutoGradMode on12(true);
    const auto ref12 = twelve(x12);
    CHECK(fast12.active.equal(ref12.active));
    CHECK(torch::allclose(fast12.weights, ref12.weights.detach(), 1e-5, 1e-6));
  }
  // Without shared sub-dimensions the top-2 overall are 2 and 1.
  SubDimRouter plain(2, mohd(4, 2, 0, 0));
  plain->centroids->weight.data().copy_(router->centroids->weight.data());
  auto p = plain(torch::tensor({{1.0f, 2.0f}}));
  CHECK(p.active[0].to(torch::kInt).equal(torch::tensor({0, 1, 1, 0}, torch::kInt)));
}

TEST_CASE("MoHD balance loss: beta * sum_i P_i f_i over the specialised sub-dimensions (Eq. 13)", "[mohd]") {
  // N = 3, sub-dimension 0 shared. Specialised scores renormalised per token:
  //   A (0.5, 0.3)/0.8 = (0.625, 0.375) -> argmax 1st;  B (0.3, 0.6)/0.9 = (0.3333, 0.6667) -> 2nd;
  //   C (0.6, 0.2)/0.8 = (0.75, 0.25) -> 1st.
  // P = (0.569444, 0.430556), f = (2/3, 1/3): L = 0.01 * (0.379630 + 0.143519) = 0.00523148.
  auto probs = torch::tensor({{0.2f, 0.5f, 0.3f}, {0.1f, 0.3f, 0.6f}, {0.2f, 0.6f, 0.2f}});
  CHECK(sub_dim_balance_loss(probs, 1, 0.01).item<float>() == Approx(0.00523148).epsilon(1e-4));
  CHECK(sub_dim_balance_loss(probs.view({1, 3, 3}), 1, 0.01).item<float>() == Approx(0.00523148).epsilon(1e-4));
  // Uniform routing over n specialised sub-dimensions gives beta / n; nothing routed gives 0.
  CHECK(sub_dim_balance_loss(torch::full({4, 5}, 0.2f), 1, 0.01).item<float>() == Approx(0.0025).epsilon(1e-4));
  CHECK(sub_dim_balance_loss(probs, 3, 0.01).item<float>() == 0.0f);
  // The gradient pushes the over-used sub-dimension's score down.
  auto logits = torch::log(probs).clone().requires_grad_(true);
  sub_dim_balance_loss(torch::softmax(logits, -1), 1, 1.0).backward();
  CHECK(logits.grad()[0][1].item<float>() > logits.grad()[0][2].item<float>());
}

TEST_CASE("Monarch fusion equals P^T B2 P B1 built densely from the same blocks (Eq. 9)", "[mohd]") {
  torch::manual_seed(3);
  const int d = 12, groups = 3, r = 4;
  Monarch m(d, groups);
  CHECK(m->b1.sizes() == torch::IntArrayRef({groups, r, r}));
  CHECK(m->b2.sizes() == torch::IntArrayRef({r, groups, groups}));
  // BD1 = blockdiag(b1[0..2]) (12 x 12); P v [i * groups + g] = v[g * r + i]; BD2 = blockdiag(b2[0..3]).
  std::vector<torch::Tensor> blocks1, blocks2;
  for (int g = 0; g < groups; ++g) blocks1.push_back(m->b1[g].detach());
  for (int i = 0; i < r; ++i) blocks2.push_back(m->b2[i].detach());
  auto bd1 = torch::block_diag(blocks1), bd2 = torch::block_diag(blocks2);
  auto perm = torch::zeros({d, d});
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < r; ++i) perm[i * groups + g][g * r + i] = 1.0f;
  auto dense = perm.t().mm(bd2).mm(perm).mm(bd1);
  CHECK(torch::allclose(m->dense(), dense, 1e-5, 1e-6));
  auto x = torch::randn({2, 5, d});
  CHECK(torch::allclose(m(x), torch::matmul(x, dense.t()), 1e-5, 1e-5));  // with autograd: batched matmuls
  {
    torch::NoGradGuard inference;  // inference: the one-pass column mix (kernels/sparse/monarch_mix.h)
    CHECK(torch::allclose(m(x), torch::matmul(x, dense.t()), 1e-5, 1e-5));
  }
  CHECK_THROWS_WITH(Monarch(10, 3), Catch::Matchers::Contains("not divisible"));
}

TEST_CASE("MoHD input masking, gate-weighted concatenation and activation scaling (Eq. 8, Sec. 4.2)", "[mohd]") {
  MohdMixer mixer(4, mohd(2, 1, 0, 0, true, 0.0));
  mixer->router->centroids->weight.data().copy_(torch::tensor({{1.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}}));
  Analysis an;
  // x = (1, 5, 7, 9): logits (1, 0) -> s = (0.731059, 0.268941); sub-dimension 0 (dims 0-1) active.
  const auto x = torch::tensor({{{1.0f, 5.0f, 7.0f, 9.0f}}});
  auto routing = mixer->route(x, an, "b", "p", "k");
  CHECK(mixer->mask_input(x, routing).equal(torch::tensor({{{1.0f, 5.0f, 0.0f, 0.0f}}})));
  // alpha = N * sum(active g) = 2 * 0.731059 = 1.462117; block 0 weight g * alpha = 1.068895, block 1: 0.
  auto y = mixer->combine(torch::tensor({{{1.0f, 2.0f, 3.0f, 4.0f}}}), routing);
  CHECK(y[0][0][0].item<float>() == Approx(1.068895).epsilon(1e-5));
  CHECK(y[0][0][1].item<float>() == Approx(2.137790).epsilon(1e-5));
  CHECK(y[0][0][2].item<float>() == 0.0f);
  CHECK(y[0][0][3].item<float>() == 0.0f);
  CHECK(an.aux_losses.empty());  // beta = 0
  MohdMixer unscaled(4, mohd(2, 1, 0, 0, false, 0.01));
  unscaled->router->centroids->weight.data().copy_(mixer->router->centroids->weight.data());
  auto r2 = unscaled->route(torch::tensor({{{1.0f, 5.0f, 7.0f, 9.0f}}}), an, "b", "p", "k");
  CHECK(unscaled->combine(torch::ones({1, 1, 4}), r2)[0][0][0].item<float>() == Approx(0.731059).epsilon(1e-5));
  REQUIRE(an.aux_losses.size() == 1);  // the balance loss, named as given
  CHECK(an.aux_losses[0].first == "b");
}

TEST_CASE("MoHD FFN equals the SwiGLU on each token's sliced weight matrices (Eq. 16)", "[mohd]") {
  torch::manual_seed(11);
  ModelOptions o;
  o.dim = 16;
  o.ffn_hidden = 24;
  o.ffn = "mohd";
  o.mohd_ffn = mohd(4, 2, 1, 4);
  MohdFeedForward f(o);
  for (auto& p : f.parameters()) p.data().normal_(0, 0.3);
  auto x = torch::randn({1, 5, 16});
  Analysis an;
  LayerIO io;
  auto y = f.forward(x, an, BlockTapNames(0), io);
  // Reference: per token, gather the active blocks S (4 dims each): W1, W3 columns [:, S], W2 rows [S, :].
  auto probs = torch::softmax(f.mixer->router->centroids(x), -1)[0];
  auto w1 = f.inner->w1->weight, w2 = f.inner->w2->weight, w3 = f.inner->w3->weight;
  auto fusion = f.mixer->monarch->dense();
  for (int t = 0; t < 5; ++t) {
    std::vector<std::int64_t> blocks{0};  // shared
    blocks.push_back(1 + probs[t].slice(0, 1, 4).argmax().item<std::int64_t>());
    std::vector<std::int64_t> dims;
    for (auto b : blocks)
      for (int j = 0; j < 4; ++j) dims.push_back(b * 4 + j);
    auto idx = torch::tensor(dims);
    auto xs = x[0][t].index_select(0, idx);
    auto h = torch::silu(w1.index_select(1, idx).mv(xs)) * w3.index_select(1, idx).mv(xs);
    auto out = torch::zeros({16});
    double gate_sum = 0;
    for (auto b : blocks) gate_sum += probs[t][b].item<double>();
    for (auto b : blocks) {
      auto rows = w2.slice(0, b * 4, b * 4 + 4).mv(h);
      out.slice(0, b * 4, b * 4 + 4).copy_(rows * probs[t][b] * (4.0 * gate_sum));
    }
    CHECK(torch::allclose(y[0][t], fusion.mv(out), 1e-4, 1e-5));
  }
  REQUIRE(an.aux_losses.size() == 1);
  CHECK(an.aux_losses[0].first == "blocks.0.ffn.balance");
}

TEST_CASE("MoHD parameter accounting: matrices active in active/N, router and fusion always", "[mohd]") {
  ModelOptions o;
  o.dim = 64;
  o.ffn_hidden = 128;
  o.mohd_ffn = mohd(8, 4, 3, 8);
  MohdFeedForward f(o);
  // SwiGLU 3 * 64 * 128 = 24576; router 8 * 64 = 512; Monarch 8 blocks 8x8 + 8 blocks 8x8 = 1024.
  const ParamCount c = f.param_count();
  CHECK(c.total == 24576 + 512 + 1024);
  CHECK(c.active == 24576 / 2 + 512 + 1024);
}

TEST_CASE("A MoHD model trains: gradients reach routers and fusion, balance losses are reported", "[mohd]") {
  ModelOptions o = test::tiny_model(16, 32);
  o.n_heads = 2;
  o.n_kv_heads = 1;
  o.attention = "mohd";
  o.ffn = "mohd";
  o.mohd_attn = mohd(4, 2, 1, 4);
  o.mohd_ffn = mohd(4, 2, 1, 2);
  Transformer m(o);
  m.init_weights(1);
  auto tokens = torch::randint(0, 32, {2, 8}, torch::kLong);
  Analysis an;
  auto logits = m.forward(tokens, an);
  CHECK(logits.sizes() == torch::IntArrayRef({2, 8, 32}));
  CHECK(an.aux_losses.size() == 4);  // attention and FFN balance in each of 2 layers
  {  // a pass whose losses nobody trains on (evaluation, generation, benchmarks) computes none
    Analysis inference;
    inference.aux_losses_wanted = false;
    m.forward(tokens, inference);
    CHECK(inference.aux_losses.empty());
  }
  auto loss = torch::nn::functional::cross_entropy(logits.view({-1, 32}), tokens.view({-1})) + an.total_aux_loss();
  loss.backward();
  for (const auto& p : m.named_parameters()) {
    if (p.key().find("router") == std::string::npos && p.key().find("monarch") == std::string::npos) continue;
    INFO(p.key());
    REQUIRE(p.value().grad().defined());
    CHECK(p.value().grad().abs().sum().item<float>() > 0.0f);
  }
  // Monarch blocks start like a linear layer of their fan-in, not at init_std.
  for (const auto& p : m.named_parameters())
    if (p.key().find("monarch.b1") != std::string::npos) CHECK(p.value().abs().max().item<float>() > 0.1f);
  const ParamCount c = count_parameters(m);
  CHECK(c.active < c.total);
}

TEST_CASE("MoHD x2 expansion keeps the activated parameters of the dense model (model.head_dim fixed)", "[mohd]") {
  ModelOptions dense = test::tiny_model(32, 32);
  dense.n_heads = 2;
  dense.n_kv_heads = 1;
  dense.head_dim_override = 16;
  ModelOptions x2 = dense;
  x2.dim = 64;  // twice the hidden dimension, same attention width (2 x 16) and FFN hidden size
  x2.attention = x2.ffn = "mohd";
  x2.mohd_attn = x2.mohd_ffn = mohd(8, 4, 3, 8);
  const ParamCount d = count_parameters(Transformer(dense));
  const ParamCount m = count_parameters(Transformer(x2));
  // Dense per layer: wq 32x32 + wk 32x16 + wv 32x16 + wo 32x32 + 3 FFN matrices 32x64 + 2 norms of 32.
  const std::int64_t dense_layer = 1024 + 512 + 512 + 1024 + 3 * 2048 + 64;
  CHECK(d.total == 2 * dense_layer + 32);
  CHECK(d.active == d.total);
  // x2: every matrix has one side d = 64, so 4 of 8 sub-dims use exactly the dense matrices' count; on top,
  // per component a router 64 x 8 and a Monarch fusion 8 x 8 x 8 + 8 x 8 x 8; norms are 64 wide.
  const std::int64_t own = 64 * 8 + 512 + 512;
  const std::int64_t x2_layer_active = (dense_layer - 64) + 2 * own + 128;
  CHECK(m.active == 2 * x2_layer_active + 64);
  CHECK(m.total == 2 * (2 * (dense_layer - 64) + 2 * own + 128) + 64);
}
