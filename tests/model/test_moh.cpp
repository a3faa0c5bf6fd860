// MoH (arXiv 2410.11842) formulas against hand computations: the two-stage learned router (Eq. 5-6) in
// the paper's and the official code's form, the parameter-free query-norm router with binary gates and
// its straight-through gradient (Eq. 9-10, checked against finite differences of the real-valued
// score), the head load-balance loss (Eq. 7), and the MoH attention (Eq. 4): equal to dense attention
// when every head is active, loading a dense checkpoint as is, training with the loss reported.
#include "tests/torch_catch.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "core/model/moh/head_router.h"
#include "core/model/moh/moh_attention.h"
#include "core/model/transformer.h"
#include "core/train/checkpoint.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

namespace {
MohOptions moh(int shared, int active, const std::string& router = "learned", bool two_stage = true,
               const std::string& form = "paper") {
  MohOptions o;
  o.shared = shared;
  o.active = active;
  o.router = router;
  o.two_stage = two_stage;
  o.gate_form = form;
  return o;
}

// 4 heads, 1 shared, top-2 of 3 routed; W_r rows (1,0), (0,1), (0,0); W_h rows (1,0), (0,0); x = (1, 2):
// routed logits (1, 2, 0) -> P = softmax; stage logits (1, 0) -> alpha = softmax.
HeadRouter hand_router(const MohOptions& o) {
  HeadRouter r(2, 4, o.active, o);
  torch::NoGradGuard ng;
  r->w_routed->weight.copy_(torch::tensor({{1.0f, 0.0f}, {0.0f, 1.0f}, {0.0f, 0.0f}}));
  if (r->w_shared) r->w_shared->weight.copy_(torch::tensor({{0.3f, -0.2f}}));
  if (r->w_stage) r->w_stage->weight.copy_(torch::tensor({{1.0f, 0.0f}, {0.0f, 0.0f}}));
  return r;
}

const double e1 = std::exp(1.0), e2 = std::exp(2.0), Z = e1 + e2 + 1.0;
const double P[3] = {e1 / Z, e2 / Z, 1.0 / Z};                        // 0.244728, 0.665241, 0.090031
const double A1 = e1 / (e1 + 1.0), A2 = 1.0 / (e1 + 1.0);             // 0.731059, 0.268941
}  // namespace

TEST_CASE("MoH learned router: alpha1 Softmax(W_s x) shared, alpha2 Softmax(W_r x) on the top-K (Eq. 5-6)", "[moh]") {
  auto r = hand_router(moh(1, 3))->forward(torch::tensor({{1.0f, 2.0f}}), torch::Tensor());
  // Shared: softmax over one head = 1, times alpha1; routed heads 1, 2 chosen (P = .665, .245), head 3 not.
  const double g[4] = {A1, A2 * P[0], A2 * P[1], 0.0};
  for (int i = 0; i < 4; ++i) CHECK(r.gates[0][i].item<float>() == Approx(g[i]).epsilon(1e-5));
  for (int i = 0; i < 3; ++i) CHECK(r.routed_probs[0][i].item<float>() == Approx(P[i]).epsilon(1e-5));
  const float sel[4] = {1, 1, 1, 0};
  for (int i = 0; i < 4; ++i) CHECK(r.selected[0][i].item<float>() == sel[i]);

  // Without two-stage routing alpha1 = alpha2 = 1.
  auto flat = hand_router(moh(1, 3, "learned", false))->forward(torch::tensor({{1.0f, 2.0f}}), torch::Tensor());
  CHECK(flat.gates[0][0].item<float>() == Approx(1.0));
  CHECK(flat.gates[0][2].item<float>() == Approx(P[1]).epsilon(1e-5));

  // The official code's form: kept routed weights renormalised to 1 and times K = 2; alphas times 2;
  // shared times h_s = 1.
  auto code = hand_router(moh(1, 3, "learned", true, "code"))->forward(torch::tensor({{1.0f, 2.0f}}), torch::Tensor());
  const double kept = P[0] + P[1];
  const double gc[4] = {2 * A1, 2 * A2 * 2 * P[0] / kept, 2 * A2 * 2 * P[1] / kept, 0.0};
  for (int i = 0; i < 4; ++i) CHECK(code.gates[0][i].item<float>() == Approx(gc[i]).epsilon(1e-5));

  // Quantised learned router: forward gates are the 0/1 selection, the gradient that of the real gates.
  MohOptions q = moh(1, 3);
  q.quantised = true;
  auto x = torch::tensor({{1.0f, 2.0f}});
  auto hq = hand_router(q);
  auto rq = hq->forward(x, torch::Tensor());
  for (int i = 0; i < 4; ++i) CHECK(rq.gates[0][i].item<float>() == (i < 3 ? 1.0f : 0.0f));
  (rq.gates * torch::tensor({{0.5f, 1.0f, -2.0f, 3.0f}})).sum().backward();
  auto hr = hand_router(moh(1, 3));
  auto real = hr->forward(x, torch::Tensor());
  // Eq. 10 with the unmasked real score: alpha2 * Softmax(W_r x) on every routed head.
  auto real_gates = torch::cat({real.gates.narrow(-1, 0, 1), real.routed_probs * (real.gates[0][1] / real.routed_probs[0][0])}, -1);
  (real_gates * torch::tensor({{0.5f, 1.0f, -2.0f, 3.0f}})).sum().backward();
  CHECK(torch::allclose(hq->w_routed->weight.grad(), hr->w_routed->weight.grad(), 1e-5, 1e-6));
  CHECK(torch::allclose(hq->w_stage->weight.grad(), hr->w_stage->weight.grad(), 1e-5, 1e-6));

  // No shared heads: all four heads routed, no stage weights.
  MohOptions none = moh(0, 2);
  HeadRouter r0(2, 4, 2, none);
  CHECK_FALSE(r0->w_shared);
  CHECK_FALSE(r0->w_stage);
  auto g0 = r0->forward(torch::randn({5, 2}), torch::Tensor());
  CHECK(g0.selected.sum(-1).eq(2).all().item<bool>());
}

TEST_CASE("MoH with every head active under the paper's gates: scale without sparsity (the branch-scale control)", "[moh]") {
  // 1 shared + top-3 of 3 routed: every head is used, weighted by Eq. 5-6's gates, which sum to 1
  // (alpha1 + alpha2 (P0 + P1 + P2)), so the branch starts at the paper gates' scale with nothing dropped.
  auto r = hand_router(moh(1, 4))->forward(torch::tensor({{1.0f, 2.0f}}), torch::Tensor());
  const double g[4] = {A1, A2 * P[0], A2 * P[1], A2 * P[2]};
  for (int i = 0; i < 4; ++i) CHECK(r.gates[0][i].item<float>() == Approx(g[i]).epsilon(1e-5));
  for (int i = 0; i < 4; ++i) CHECK(r.selected[0][i].item<float>() == 1.0f);
  CHECK(r.gates.sum().item<float>() == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("MoH router without autograd (one packed product, per-row softmax and top-K) equals the torch form", "[moh]") {
  torch::manual_seed(21);
  // Every option the router has: learned / query-norm, shared heads 0-2, two-stage or not, the paper's or
  // the code's gate form, quantised gates, budgets from one routed head to all of them.
  struct Case {
    int shared, active;
    std::string router;
    bool two_stage, quantised;
    std::string form;
  };
  const std::vector<Case> cases = {{1, 3, "learned", true, false, "paper"},  {2, 4, "learned", true, false, "code"},
                                   {1, 3, "learned", false, false, "paper"}, {0, 2, "learned", true, false, "code"},
                                   {1, 3, "learned", true, true, "paper"},   {2, 2, "learned", true, false, "paper"},
                                   {1, 6, "learned", true, false, "code"},   {1, 2, "query_norm", true, false, "paper"},
                                   {0, 3, "query_norm", true, false, "paper"}};
  for (const auto& c : cases) {
    INFO(c.router << " shared " << c.shared << " active " << c.active << " two-stage " << c.two_stage << " quantised "
                  << c.quantised << " " << c.form);
    MohOptions o = moh(c.shared, c.active, c.router, c.two_stage, c.form);
    o.quantised = c.quantised;
    HeadRouter r(12, 6, c.active, o);
    const auto x = torch::randn({3, 37, 12}), q = torch::randn({3, 37, 6, 8});
    const HeadRouting ref = r->forward(x, q);  // autograd on: the torch form
    torch::NoGradGuard ng;
    const HeadRouting fused = r->forward(x, q);
    CHECK(torch::allclose(fused.gates, ref.gates.detach(), 1e-5, 1e-6));
    CHECK(torch::allclose(fused.routed_probs, ref.routed_probs.detach(), 1e-5, 1e-6));
    CHECK(torch::equal(fused.selected, ref.selected));
    CHECK(fused.selected.sum(-1).eq(c.active).all().item<bool>());
  }
  // The hand-computed router gives the hand values without autograd too.
  torch::NoGradGuard ng;
  auto hand = hand_router(moh(1, 3))->forward(torch::tensor({{1.0f, 2.0f}}), torch::Tensor());
  const double g[4] = {A1, A2 * P[0], A2 * P[1], 0.0};
  for (int i = 0; i < 4; ++i) CHECK(hand.gates[0][i].item<float>() == Approx(g[i]).epsilon(1e-5));
}

TEST_CASE("MoH load-balance loss: sum over routed heads of f_i P_i (Eq. 7)", "[moh]") {
  // Two tokens, three routed heads, top-1: token 1 -> head 0, token 2 -> head 1.
  auto probs = torch::tensor({{0.5f, 0.3f, 0.2f}, {0.1f, 0.6f, 0.3f}});
  auto sel = torch::tensor({{1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f}});
  // f = (0.5, 0.5, 0), P = (0.3, 0.45, 0.25): L = 0.15 + 0.225 = 0.375; the code form times 3 routed heads.
  CHECK(head_balance_loss(probs, sel, "paper").item<float>() == Approx(0.375));
  CHECK(head_balance_loss(probs, sel, "code").item<float>() == Approx(1.125));
  // Uniform scores and selection: K/R.
  auto u = torch::full({4, 4}, 0.25f);
  auto s2 = torch::tensor({{1.0f, 1.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f, 1.0f}, {1.0f, 0.0f, 1.0f, 0.0f}, {0.0f, 1.0f, 0.0f, 1.0f}});
  CHECK(head_balance_loss(u, s2, "paper").item<float>() == Approx(0.5));
  // The gradient reaches P only (f counts selections).
  auto p = probs.clone().requires_grad_(true);
  head_balance_loss(p, sel, "paper").backward();
  CHECK(p.grad()[0][0].item<float>() == Approx(0.5 / 2));  // dL/dp_ti = f_i / T
  CHECK(p.grad()[1][2].item<float>() == Approx(0.0));
}

TEST_CASE("MoH query-norm router: binary gates, straight-through gradient of the real score (Eq. 9-10)", "[moh]") {
  MohOptions o = moh(1, 2, "query_norm");
  HeadRouter r(2, 4, 2, o);
  CHECK(r->parameters().empty());  // parameter-free
  // Queries before RoPE [1 token, 4 heads, 2]; routed head norms 5, 1, sqrt(2): head 1 is chosen.
  auto q = torch::tensor({{{9.0f, 9.0f}, {3.0f, 4.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}}}).requires_grad_(true);
  auto out = r->forward(torch::zeros({1, 2}), q);
  const float forward[4] = {1, 1, 0, 0};
  for (int i = 0; i < 4; ++i) CHECK(out.gates[0][i].item<float>() == forward[i]);
  // Scores: norms / their standard deviation (n - 1) across routed heads, softmax.
  const double n[3] = {5.0, 1.0, std::sqrt(2.0)};
  const double mean = (n[0] + n[1] + n[2]) / 3;
  double var = 0;
  for (double v : n) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / 2);
  double z = 0;
  for (double v : n) z += std::exp(v / sd);
  for (int i = 0; i < 3; ++i) CHECK(out.routed_probs[0][i].item<float>() == Approx(std::exp(n[i] / sd) / z).epsilon(1e-4));

  // Eq. 10: d(sum c . g^q)/dq equals d(sum c . g)/dq of the real-valued score g = (1, P): compare
  // with central finite differences of the real-valued function.
  const std::vector<double> c = {0.7, -1.3, 2.1, 0.4};
  auto loss = (out.gates * torch::tensor({{0.7f, -1.3f, 2.1f, 0.4f}})).sum();
  loss.backward();
  auto real = [&](const torch::Tensor& qq) {
    auto norms = qq.narrow(1, 1, 3).to(torch::kDouble).norm(2, -1);
    auto s = torch::softmax(norms / norms.std(-1, true, true), -1);
    double v = c[0];
    for (int i = 0; i < 3; ++i) v += c[i + 1] * s[0][i].item<double>();
    return v;
  };
  const double h = 1e-3;
  for (int head = 0; head < 4; ++head)
    for (int j = 0; j < 2; ++j) {
      auto qp = q.detach().clone(), qm = q.detach().clone();
      qp[0][head][j] += h;
      qm[0][head][j] -= h;
      const double fd = (real(qp) - real(qm)) / (2 * h);
      INFO("head " << head << " component " << j);
      CHECK(q.grad()[0][head][j].item<float>() == Approx(fd).margin(2e-4));
    }
  CHECK(std::fabs(q.grad()[0][2][1].item<float>()) > 1e-3);  // an unselected head still gets a gradient
}

namespace {
ModelOptions tiny(const std::string& attention) {
  ModelOptions o = test::tiny_model(16, 32);
  o.attention = attention;
  return o;
}
}  // namespace

TEST_CASE("MoH attention: a dense checkpoint loads as is — all heads active equals dense (Eq. 4)", "[moh]") {
  ModelOptions d = tiny("dense");
  Transformer dense(d);
  dense.init_weights(3);
  ModelOptions m = tiny("moh");
  m.moh = moh(4, 4, "query_norm");  // every head shared: binary gates all 1
  Transformer mo(m);
  // Same parameter names (the query-norm router has none): the dense state loads into the MoH model.
  auto dp = dense.named_parameters();
  auto mp = mo.named_parameters();
  REQUIRE(dp.size() == mp.size());
  {
    torch::NoGradGuard ng;
    for (const auto& p : dp) mp[p.key()].copy_(p.value());
  }
  auto tokens = torch::randint(0, 32, {2, 8}, torch::kLong);
  Analysis c1, c2;
  CHECK(torch::allclose(dense.forward(tokens, c1), mo.forward(tokens, c2), 1e-5, 1e-6));

  // Routed heads that are all chosen (1 shared + top-3 of 3): binary gates 1 again, equal to dense.
  m.moh = moh(1, 4, "query_norm");
  Transformer all(m);
  {
    torch::NoGradGuard ng;
    auto ap = all.named_parameters();
    for (const auto& p : dp) ap[p.key()].copy_(p.value());
  }
  Analysis c4;
  CHECK(torch::allclose(dense.forward(tokens, c1), all.forward(tokens, c4), 1e-5, 1e-6));

  // 75% of heads (1 shared + top-2 of 3) changes the output but keeps the parameters.
  m.moh = moh(1, 3, "query_norm");
  Transformer part(m);
  {
    torch::NoGradGuard ng;
    auto pp = part.named_parameters();
    for (const auto& p : dp) pp[p.key()].copy_(p.value());
  }
  Analysis c3;
  CHECK_FALSE(torch::allclose(dense.forward(tokens, c1), part.forward(tokens, c3), 1e-4, 1e-5));
  const ParamCount pc = count_parameters(part), dc = count_parameters(dense);
  CHECK(pc.total == dc.total);
  // wq and wo (16x16 each) at 3/4 of the heads, wk and wv (16x8 each) in full, per layer.
  CHECK(dc.total - pc.active == 2 * (512 / 4));
}

TEST_CASE("A MoH model trains: gradients reach the routers, the balance loss is reported", "[moh]") {
  ModelOptions m = tiny("moh");
  m.moh = moh(2, 3);  // two shared heads: with one, Softmax(W_s x) is the constant 1 and W_s learns nothing
  m.moh.layer_active = {"3", "4"};
  Transformer model(m);
  model.init_weights(1);
  TapRecorder probes("blocks.0.attn.router.topk,blocks.1.attn.router.probs");
  Analysis an;
  an.tap_recorder = &probes;
  auto tokens = torch::randint(0, 32, {2, 8}, torch::kLong);
  auto logits = model.forward(tokens, an);
  REQUIRE(an.aux_losses.size() == 2);
  auto taps = probes.take();
  CHECK(an.aux_losses[0].first == "blocks.0.attn.balance");
  // Layer 0 uses 3 heads per token (2 shared + top-1 of 2), layer 1 all four.
  CHECK(taps.at("blocks.0.attn.router.topk").sum(-1).eq(3).all().item<bool>());
  CHECK(taps.at("blocks.1.attn.router.probs").size(-1) == 4);
  auto loss = torch::nn::functional::cross_entropy(logits.view({-1, 32}), tokens.view({-1})) + an.total_aux_loss();
  loss.backward();
  int routers = 0;
  for (const auto& p : model.named_parameters()) {
    if (p.key().find("head_router") == std::string::npos) continue;
    ++routers;
    INFO(p.key());
    REQUIRE(p.value().grad().defined());
    CHECK(p.value().grad().abs().sum().item<float>() > 0.0f);
  }
  CHECK(routers == 6);  // W_s, W_r, W_h in each of 2 layers
}

TEST_CASE("Continue-tuning: a dense checkpoint initialises a MoH model, routers keep their init", "[moh][checkpoint]") {
  const std::string dir = (std::filesystem::temp_directory_path() / ("moxlab_moh_init_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  Config dc;
  dc.model = tiny("dense");
  dc.train.seq_len = 16;
  auto dense = std::make_shared<Transformer>(dc.model);
  dense->init_weights(5);
  CheckpointMeta meta;
  meta.config_json = dc.to_json();
  save_checkpoint(dir + "/dense.pt", *dense, nullptr, meta);

  ModelOptions mo = tiny("moh");
  mo.moh = moh(2, 3);  // learned router: 3 new matrices per layer
  Transformer m(mo);
  m.init_weights(9);
  const InitFromReport r = init_from_checkpoint(m, dir + "/dense.pt");
  CHECK(r.kept == 6);
  CHECK(r.copied == static_cast<int>(dense->named_parameters().size() + dense->named_buffers().size()));
  CHECK(torch::equal(m.named_parameters()["blocks.1.attn.wq.weight"], dense->named_parameters()["blocks.1.attn.wq.weight"]));

  ModelOptions heads = tiny("moh");
  heads.n_heads = 2;
  heads.n_kv_heads = 1;
  heads.head_dim_override = 8;
  heads.moh = moh(1, 2);
  Transformer h(heads);
  CHECK_THROWS_WITH(init_from_checkpoint(h, dir + "/dense.pt"), Catch::Contains("model.n_heads differs"));

  ModelOptions wide = tiny("moh");
  wide.dim = 32;
  wide.head_dim_override = 4;  // same head geometry, wider model
  wide.moh = moh(2, 3);
  Transformer w(wide);
  CHECK_THROWS_WITH(init_from_checkpoint(w, dir + "/dense.pt"), Catch::Contains("has shape [32, 16] there but [32, 32] here"));
  std::filesystem::remove_all(dir);
}
