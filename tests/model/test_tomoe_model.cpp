// The ToMoE model kind (attention and FFN "tomoe" on a dense model, hypernetwork in the Transformer):
// at initialisation (offset b = 3) every gate keeps everything, so the gated model is exactly the dense
// model it was built from; with gates off it is the dense model whatever the gates say (the teacher of
// Eq. 10); the regularisers computed from a pass's trace match a hand computation; the distillation KL
// matches its definition; gradients reach the hypernetwork, masks and routers and nothing else when the
// dense weights are frozen; end to end, routing-only distillation leaves every dense weight untouched.
#include "tests/torch_catch.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"
#include "core/data/tokenizers/tokenizer.h"
#include "core/io/llama2c_import.h"
#include "core/engine/kv_cache.h"
#include "core/model/tomoe/tomoe_conversion.h"
#include "core/model/tomoe/tomoe_modules.h"
#include "core/engine/tomoe_moe_plan.h"
#include "core/io/tomoe_moe_file.h"
#include "core/io/safetensors.h"
#include "core/model/tomoe/tomoe_trace.h"
#include "core/model/model_kind.h"
#include "core/model/transformer.h"
#include "core/store/run_store.h"
#include "core/train/checkpoint.h"
#include "core/train/distillation.h"
#include "tests/cli/cli_support.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {
ModelOptions dense_options() {
  ModelOptions o = test::tiny_model();
  o.ffn_hidden = 48;
  return o;
}
ModelOptions tomoe_options() {
  ModelOptions o = dense_options();
  o.attention = "tomoe";
  o.ffn = "tomoe";
  o.tomoe.experts = 3;
  o.tomoe.hypernet_hidden = 8;
  return o;
}
// Copies every tensor of `from` into the same-named tensor of `to` (ToMoE keeps the dense names).
void copy_dense_weights(Transformer& from, Transformer& to) {
  torch::NoGradGuard ng;
  auto dst = to.named_parameters(true);
  for (const auto& p : from.named_parameters(true)) dst[p.key()].copy_(p.value());
}
// What one forward pass decided (masks, routes), without gradients.
TomoeTrace traced_forward(Transformer& model, const torch::Tensor& tokens) {
  torch::NoGradGuard ng;
  Analysis an;
  model.forward(tokens, an);
  return an.tomoe;
}
double find_aux(const Analysis& an, const std::string& name) {
  for (const auto& [n, v] : an.aux_losses)
    if (n == name) return v.item<double>();
  FAIL("no auxiliary loss " << name);
  return 0;
}
}  // namespace

TEST_CASE("ToMoE model at initialisation is the dense model — gates off is the dense model always", "[tomoe][model]") {
  Transformer dense(dense_options());
  dense.init_weights(3);
  Transformer tomoe(tomoe_options());
  tomoe.init_weights(4);
  copy_dense_weights(dense, tomoe);
  REQUIRE(tomoe.hypernet);
  dense.eval();
  tomoe.eval();
  torch::NoGradGuard ng;
  auto tokens = torch::randint(0, 50, {2, 12}, torch::kLong);
  auto want = dense.forward(tokens);

  Analysis an;
  auto gated = tomoe.forward(tokens, an);
  const TomoeTrace& trace = an.tomoe;
  CHECK(torch::allclose(gated, want, 1e-5, 1e-6));
  REQUIRE(trace.attention.size() == 2);
  for (int l = 0; l < 2; ++l) {  // offset b = 3: every decision keeps
    CHECK(trace.attention[l].qk.min().item<float>() == 1.0f);
    CHECK(trace.attention[l].vo.min().item<float>() == 1.0f);
    CHECK(trace.mlp[l].expert_masks.min().item<float>() == 1.0f);
    CHECK(trace.mlp[l].route.sum(-1).eq(1).all().item<bool>());  // one expert per token
  }
  // Eq. 10's terms, weighted: every width full, so R_P = |log(1 / p)| and R_U = 0.
  CHECK(find_aux(an, "tomoe.param") == Approx(16.0 * std::log(2.0)).epsilon(1e-5));
  CHECK(find_aux(an, "tomoe.union") == Approx(0.0).margin(1e-6));
  CHECK(find_aux(an, "tomoe.load") >= 1.0 / 3 - 1e-6);  // official R_L = sum F_i^2 >= 1/N (N = 3), = 1/N when balanced
  REQUIRE(an.stats.size() == 1);
  CHECK(an.stats[0].second == Approx(1.0));

  // Gates that drop most channels change the gated model, never the gates-off one.
  ModelOptions pruned = tomoe_options();
  pruned.tomoe.offset = -0.2;
  Transformer cut(pruned);
  cut.init_weights(4);
  copy_dense_weights(dense, cut);
  cut.eval();
  Analysis cut_ctx;
  auto cut_logits = cut.forward(tokens, cut_ctx);
  CHECK_FALSE(torch::allclose(cut_logits, want, 1e-3, 1e-4));
  CHECK(cut_ctx.stats.at(0).second < 0.9);
  Analysis off;
  PassOptions gates_off;
  gates_off.gates_off = true;
  CHECK(torch::allclose(cut.forward(tokens, off, gates_off), want, 1e-6, 1e-7));
  CHECK(off.aux_losses.empty());
  CHECK(off.tomoe.attention.empty());  // no ToMoE decisions in a gates-off pass
}

TEST_CASE("ToMoE regularisers from a pass's trace match a hand computation (Eq. 6-9, 16)", "[tomoe][model]") {
  ModelOptions o;
  o.dim = 4;
  o.n_layers = 1;
  o.n_heads = 2;
  o.n_kv_heads = 1;
  o.ffn_hidden = 3;
  o.tomoe.active = 0.5;
  TomoeTrace trace;
  trace.reset(1);
  trace.attention[0].qk = torch::tensor({1.0f, 1.0f});
  trace.attention[0].vo = torch::tensor({1.0f, 0.0f, 0.0f, 0.0f}).reshape({1, 2, 2});   // widest token keeps 1
  trace.mlp[0].expert_masks = torch::tensor({1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 0.0f}).reshape({2, 3});  // widest expert 2
  trace.mlp[0].route = torch::tensor({1.0f, 0.0f, 1.0f, 0.0f}).reshape({1, 2, 2});    // both tokens to expert 0
  trace.mlp[0].probs = torch::tensor({0.8f, 0.2f, 0.4f, 0.6f}).reshape({1, 2, 2});
  const TomoeRegularisers r = tomoe_regularisers(trace, o);
  // T per kept head dim = d (H + H_kv) = 12 for Q+K and for V+O; per MLP channel 3d = 12.
  // T(d_MoE) = 12*2 + 12*1 + 12*2 = 60; T_total = 12*2 + 12*2 + 12*3 = 84; target p T_total = 42.
  CHECK(r.active_ratio == Approx(60.0 / 84.0));
  CHECK(r.param.item<double>() == Approx(std::log(60.0 / 42.0)).epsilon(1e-5));
  // Unions: v/o over tokens [1, 0] (mean 1/2); MLP over experts [1, 1, 0] (mean 2/3); R_U averages both.
  CHECK(r.union_term.item<double>() == Approx((std::log(2.0) + std::log(1.5)) / 2).epsilon(1e-5));
  // Official R_L: F = [1, 0], P = mean of the routes = [1, 0]: sum F P = 1.
  CHECK(r.load.item<double>() == Approx(1.0).epsilon(1e-5));
  // Eq. 9 as printed (tomoe.load_balance = paper): P = mean softmax [0.6, 0.4], N sum F P = 2 * 0.6.
  o.tomoe.load_balance = "paper";
  CHECK(tomoe_regularisers(trace, o).load.item<double>() == Approx(1.2).epsilon(1e-5));
  // Per-token q/k masks (tomoe.mask_noise = token, training): Eq. 8 takes the widest token's, here 2 of 2.
  trace.attention[0].qk = torch::tensor({1.0f, 1.0f, 0.0f, 0.0f}).reshape({1, 2, 2});
  CHECK(tomoe_widths(trace, o)[0].qk.item<float>() == 2.0f);
}

TEST_CASE("Distillation KL (Eq. 10) matches sum p_T log(p_T / p_S) and its gradient reaches only the student",
          "[tomoe][distill]") {
  auto teacher = torch::tensor({0.0, std::log(2.0)}, torch::kDouble).reshape({1, 1, 2}).to(torch::kFloat);
  auto student = torch::zeros({1, 1, 2}, torch::requires_grad());
  auto kl = distillation_kl(teacher, student);
  // p_T = [1/3, 2/3], p_S = [1/2, 1/2].
  const double want = 1.0 / 3 * std::log((1.0 / 3) / 0.5) + 2.0 / 3 * std::log((2.0 / 3) / 0.5);
  CHECK(kl.item<double>() == Approx(want).epsilon(1e-5));
  kl.backward();
  // d KL / d student logits = p_S - p_T.
  CHECK(student.grad()[0][0][0].item<double>() == Approx(0.5 - 1.0 / 3).epsilon(1e-5));
  CHECK(student.grad()[0][0][1].item<double>() == Approx(0.5 - 2.0 / 3).epsilon(1e-5));
  // Same distributions: zero; the mean runs over positions.
  auto same = torch::randn({3, 4, 7});
  CHECK(distillation_kl(same, same.clone()).item<double>() == Approx(0.0).margin(1e-6));
  CHECK_THROWS_AS(distillation_kl(torch::zeros({2, 3}), torch::zeros({2, 4})), Error);
}

TEST_CASE("Routing parameters: gradients reach hypernetwork, masks and routers — frozen dense weights get none",
          "[tomoe][model]") {
  ModelOptions o = tomoe_options();
  o.tomoe.offset = 0.5;  // gates near their threshold, so straight-through gradients are not vanishing
  Transformer model(o);
  model.init_weights(5);
  int routing = 0;
  for (auto& p : model.named_parameters()) {
    if (is_routing_parameter(p.key())) ++routing;
    else p.value().set_requires_grad(false);
  }
  CHECK(routing > 0);
  CHECK(is_routing_parameter("hypernet.gru.weight_ih_l0"));
  CHECK(is_routing_parameter("blocks.1.ffn.expert_router.proj.weight"));
  CHECK(is_routing_parameter("blocks.0.attn.masker.dec.bias"));
  CHECK_FALSE(is_routing_parameter("blocks.0.attn.wq.weight"));
  CHECK_FALSE(is_routing_parameter("tok_embeddings.weight"));
  model.train();
  torch::manual_seed(9);
  auto tokens = torch::randint(0, 50, {2, 12}, torch::kLong);
  Analysis an;
  auto student = model.forward(tokens, an);
  torch::Tensor teacher;
  {
    torch::NoGradGuard ng;
    Analysis t;
    PassOptions gates_off;
    gates_off.gates_off = true;
    teacher = model.forward(tokens, t, gates_off);
  }
  (distillation_kl(teacher, student) + an.total_aux_loss()).backward();
  auto params = model.named_parameters();
  for (const char* name : {"hypernet.gru.weight_ih_l0", "hypernet.gru.weight_hh_l0_reverse", "blocks.0.attn.masker.proj_e.weight",
                           "blocks.1.attn.masker.dec.weight", "blocks.0.ffn.expert_router.router.weight",
                           "blocks.1.ffn.expert_router.proj.weight"}) {
    INFO(name);
    REQUIRE(params[name].grad().defined());
    CHECK(params[name].grad().abs().sum().item<double>() > 0);
  }
  for (const char* name : {"blocks.0.attn.wq.weight", "blocks.1.ffn.w2.weight", "tok_embeddings.weight"}) {
    INFO(name);
    CHECK_FALSE(params[name].grad().defined());
  }
}

TEST_CASE("ToMoE conversion (paper): v/o top-K with K the mean kept count, then every token keeps exactly K", "[tomoe][model]") {
  ModelOptions o = tomoe_options();
  o.tomoe.offset = 0.0;  // about half of every mask kept
  o.tomoe.conversion = "paper";
  o.tomoe.expert_widths = "own";  // frozen = the draw itself (grown to the widest: the next test)
  Transformer model(o);
  model.init_weights(6);
  torch::manual_seed(10);
  std::vector<torch::Tensor> calibration{torch::randint(0, 50, {2, 12}, torch::kLong), torch::randint(0, 50, {3, 12}, torch::kLong)};
  // The mean kept count of the deterministic masks, by hand.
  model.eval();
  std::vector<double> kept(2, 0.0);
  std::vector<torch::Tensor> expert_masks(2), qk(2);  // the noise-free masks the conversion must freeze
  {
    torch::NoGradGuard ng;
    for (const auto& b : calibration) {
      const TomoeTrace t = traced_forward(model, b);
      for (int l = 0; l < 2; ++l) {
        kept[l] += t.attention[l].vo.sum().item<double>();
        expert_masks[l] = t.mlp[l].expert_masks.clone();
        qk[l] = t.attention[l].qk.clone();
      }
    }
  }
  torch::manual_seed(5);  // any noise drawn now would differ from the eval masks above
  const TomoeConversion c = convert_to_tomoe_moe(model, calibration);
  REQUIRE(c.vo_top_k.size() == 2);
  for (int l = 0; l < 2; ++l) {
    CHECK(c.vo_top_k[l] == static_cast<int>(std::lround(kept[l] / (5 * 12))));
    auto* attn = dynamic_cast<TomoeAttention*>(model.blocks->ptr<BlockImpl>(l)->attn.get());
    REQUIRE(attn);
    CHECK(attn->masker->inference_top_k() == c.vo_top_k[l]);
  }
  const TomoeTrace t = traced_forward(model, calibration[1]);
  for (int l = 0; l < 2; ++l) {
    CHECK(t.attention[l].vo.sum(-1).eq(c.vo_top_k[l]).all().item<bool>());
    CHECK(dynamic_cast<TomoeFeedForward*>(model.blocks->ptr<BlockImpl>(l)->ffn.get())->expert_router->frozen());
    CHECK(torch::equal(t.mlp[l].expert_masks, expert_masks[l]));  // frozen = the noise-free masks
    CHECK(torch::equal(t.attention[l].qk, qk[l]));
  }
  // Accounting: Eq. 8's T over the reported widths (d = 32, H = 4, H_kv = 2, head_dim 8, d_mid 48).
  double active = 0;
  for (int l = 0; l < 2; ++l) active += 32.0 * 6 * c.qk_width[l] + 32.0 * 6 * c.vo_top_k[l] + 96.0 * c.mlp_width[l];
  CHECK(c.active_ratio == Approx(active / (2 * (32.0 * 6 * 16 + 96.0 * 48))));
  CHECK(c.active_ratio < 1.0);
  CHECK(c.params.active < c.params.total);
  for (int l = 0; l < 2; ++l) CHECK(c.mlp_min_width[l] <= c.mlp_width[l]);
  // Fig. 5a / 8 / 9 statistics against loops over the trace's expert masks (3 experts of 48 channels).
  for (int l = 0; l < 2; ++l) {
    const auto m = t.mlp[l].expert_masks;
    REQUIRE(c.expert_widths[l].size() == 3);
    int widest = 0, covered = 0;
    for (int e = 0; e < 3; ++e) {
      CHECK(c.expert_widths[l][e] == static_cast<int>(m[e].sum().item<float>()));
      widest = std::max(widest, c.expert_widths[l][e]);
    }
    CHECK(widest == c.mlp_width[l]);
    for (int ch = 0; ch < 48; ++ch) covered += (m.select(1, ch).sum().item<float>() > 0) ? 1 : 0;
    CHECK(c.mlp_union[l] == Approx(covered / 48.0));
    double jaccard = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j) {
        const double both = (m[i] * m[j]).sum().item<float>(), either = ((m[i] + m[j]) > 0).sum().item<float>();
        jaccard += both / either / 3.0;
      }
    CHECK(c.expert_similarity[l] == Approx(jaccard));
    CHECK(c.vo_union[l] >= c.vo_top_k[l] / 8.0 - 1e-9);  // at least one token's K dims
    CHECK(c.vo_union[l] <= 1.0);
  }
}

TEST_CASE("ToMoE conversion grows every expert to the widest one's width (App. B), and the record keeps the trained widths",
          "[tomoe][model]") {
  ModelOptions o = tomoe_options();
  o.tomoe.offset = 0.0;           // about half of every mask kept, so the experts differ in width
  o.tomoe.conversion = "paper";   // noise-free: the draw is the evaluation masks, computable beforehand
  REQUIRE(o.tomoe.expert_widths == "widest");  // the default: the paper's and the official code's
  Transformer model(o);
  model.init_weights(6);
  torch::manual_seed(10);
  std::vector<torch::Tensor> calibration{torch::randint(0, 50, {2, 12}, torch::kLong)};
  model.eval();
  const TomoeTrace before = traced_forward(model, calibration[0]);
  const TomoeConversion c = convert_to_tomoe_moe(model, calibration);
  const TomoeTrace after = traced_forward(model, calibration[0]);
  bool some_grew = false;
  for (int l = 0; l < 2; ++l) {
    const auto drawn = before.mlp[l].expert_masks, frozen = after.mlp[l].expert_masks;
    const auto counts = drawn.sum(-1);
    some_grew = some_grew || counts.min().item<float>() < counts.max().item<float>();
    INFO("layer " << l << ", trained widths " << counts);
    CHECK(torch::equal(frozen.sum(-1), torch::full({3}, counts.max().item<float>())));
    CHECK((frozen >= drawn).all().item<bool>());
    for (int e = 0; e < 3; ++e) CHECK(c.expert_widths[l][e] == static_cast<int>(counts[e].item<float>()));
    CHECK(c.mlp_min_width[l] == static_cast<int>(counts.min().item<float>()));
    CHECK(c.mlp_width[l] == static_cast<int>(counts.max().item<float>()));
  }
  CHECK(some_grew);
  // Eq. 8 counts the widest expert, so growing the others leaves the active ratio as it was.
  ModelOptions own = o;
  own.tomoe.expert_widths = "own";
  Transformer same(own);
  same.init_weights(6);
  CHECK(convert_to_tomoe_moe(same, calibration).active_ratio == Approx(c.active_ratio));
}

TEST_CASE("ToMoE conversion (code): masks frozen from one noisy draw, K = widest noisy token per batch, averaged",
          "[tomoe][model]") {
  ModelOptions o = tomoe_options();
  o.tomoe.offset = 0.0;
  REQUIRE(o.tomoe.conversion == "code");  // the default: the official code's conversion
  Transformer model(o), by_hand(o);
  model.init_weights(6);
  by_hand.init_weights(6);
  torch::manual_seed(10);
  std::vector<torch::Tensor> calibration{torch::randint(0, 50, {2, 12}, torch::kLong), torch::randint(0, 50, {3, 12}, torch::kLong)};
  // By hand, drawing in the conversion's order: per layer the q/k and expert masks (noisy), then the
  // calibration passes in training mode; the widest token's kept count per batch, averaged over batches.
  std::vector<double> widest(2, 0.0);
  torch::manual_seed(77);
  {
    torch::NoGradGuard ng;
    by_hand.eval();
    const torch::Tensor experts = by_hand.hypernet->forward();
    for (int l = 0; l < 2; ++l) {
      auto* block = by_hand.blocks->ptr<BlockImpl>(l).get();
      dynamic_cast<TomoeAttention*>(block->attn.get())->masker->freeze_qk(experts[l], true);
      dynamic_cast<TomoeFeedForward*>(block->ffn.get())->expert_router->freeze_masks(experts[l], true);
    }
    by_hand.train();
    for (const auto& b : calibration) {
      const TomoeTrace t = traced_forward(by_hand, b);
      for (int l = 0; l < 2; ++l) {
        auto counts = t.attention[l].vo.reshape({-1, 8}).sum(-1);
        widest[l] += counts.max().item<double>() / 2.0;
      }
    }
  }
  torch::manual_seed(77);
  const TomoeConversion c = convert_to_tomoe_moe(model, calibration);
  // The frozen masks are the by-hand draws, 0/1, and what an evaluation pass uses.
  const TomoeTrace t = traced_forward(model, calibration[1]);
  for (int l = 0; l < 2; ++l) {
    auto* mine = dynamic_cast<TomoeFeedForward*>(model.blocks->ptr<BlockImpl>(l)->ffn.get());
    auto* hand = dynamic_cast<TomoeFeedForward*>(by_hand.blocks->ptr<BlockImpl>(l)->ffn.get());
    CHECK(mine->expert_router->frozen());
    CHECK(torch::equal(t.mlp[l].expert_masks, hand->expert_router->named_buffers()["frozen_masks"]));
    CHECK(t.mlp[l].expert_masks.mul(1 - t.mlp[l].expert_masks).abs().sum().item<double>() == 0.0);
    CHECK(torch::equal(t.attention[l].qk,
                       dynamic_cast<TomoeAttention*>(by_hand.blocks->ptr<BlockImpl>(l)->attn.get())
                           ->masker->named_buffers()["frozen_qk"].repeat_interleave(2)));
  }
  CHECK_FALSE(model.is_training());
  for (int l = 0; l < 2; ++l) {
    CHECK(c.vo_top_k[l] == std::clamp(static_cast<int>(std::lround(widest[l])), 1, 8));
  }
  // Frozen masks and K travel with the weights (checkpoint archives): a reloaded model computes the same.
  const std::string path = scratch_dir("tomoe_frozen") + "/converted.pt";
  {
    torch::serialize::OutputArchive out;
    model.save(out);
    out.save_to(path);
  }
  Transformer reloaded(o);
  {
    torch::serialize::InputArchive in;
    in.load_from(path);
    reloaded.load(in);
  }
  reloaded.eval();
  {
    torch::NoGradGuard ng;
    CHECK(torch::equal(reloaded.forward(calibration[1]), model.forward(calibration[1])));
  }
  // Fig. 9's matrices: symmetric, 1 on the diagonal, their off-diagonal mean is the reported similarity.
  for (int l = 0; l < 2; ++l) {
    const auto& j = c.expert_jaccard[l];
    REQUIRE(j.size() == 9);
    double off = 0;
    for (int a = 0; a < 3; ++a) {
      CHECK(j[a * 3 + a] == 1.0);
      for (int b = 0; b < 3; ++b) {
        CHECK(j[a * 3 + b] == Approx(j[b * 3 + a]));
        if (a != b) off += j[a * 3 + b] / 6.0;
      }
    }
    CHECK(c.expert_similarity[l] == Approx(off));
  }
}

TEST_CASE("ToMoE export: the MoE holding only kept weights equals the gated model (App. B.3) and survives save/load",
          "[tomoe][model][export]") {
  for (double offset : {0.0, -0.5}) {  // about half kept, and little kept (q/k may vanish: uniform attention)
    INFO("offset " << offset);
    ModelOptions o = tomoe_options();
    o.tomoe.offset = offset;
    Transformer model(o);
    model.init_weights(8);
    torch::manual_seed(11);
    const std::vector<torch::Tensor> calibration{torch::randint(0, 50, {2, 12}, torch::kLong)};
    const TomoeConversion c = convert_to_tomoe_moe(model, calibration);
    const TomoeMoePlan moe(extract_tomoe_moe(model));
    auto tokens = torch::randint(0, 50, {3, 16}, torch::kLong);
    torch::Tensor gated;
    {
      torch::NoGradGuard ng;
      gated = model.forward(tokens);  // the pseudo-MoE: dense weights with masks
    }
    CHECK(torch::allclose(moe.forward(tokens), gated, 1e-4, 1e-5));
    CHECK(torch::allclose(moe.forward(tokens, nullptr, true), gated.narrow(1, 15, 1), 1e-4, 1e-5));  // a prompt's next-token logits
    {  // Two threads over 96 tokens: the experts' row ranges split between the threads.
      const auto many = torch::randint(0, 50, {6, 16}, torch::kLong);
      torch::Tensor want;
      {
        torch::NoGradGuard ng;
        want = model.forward(many);
      }
      const int before = at::get_num_threads();
      at::set_num_threads(2);
      const auto got = moe.forward(many);
      at::set_num_threads(before);
      CHECK(torch::allclose(got, want, 1e-4, 1e-5));
    }
    // The experts really are smaller: stacked at the widest expert's width, q/k at the kept pairs.
    for (int l = 0; l < 2; ++l) {
      CHECK(moe.weights().tensors.at("layers." + std::to_string(l) + ".ffn.w_gate").size(1) == std::max(1, c.mlp_width[l]));
      CHECK(moe.weights().tensors.at("layers." + std::to_string(l) + ".attn.wq").size(0) == 4 * c.qk_width[l]);
    }
    const ParamCount p = moe.weights().param_count();
    CHECK(p.active < p.total);
    const std::string path = scratch_dir("tomoe_export") + "/moe" + std::to_string(offset < 0) + ".safetensors";
    save_tomoe_moe(moe.weights(), path);
    const TomoeMoePlan back(load_tomoe_moe(path));
    CHECK(torch::allclose(back.forward(tokens), gated, 1e-4, 1e-5));
  }
  const std::string plain = scratch_dir("tomoe_export") + "/plain.safetensors";
  write_safetensors(plain, {{"x", torch::zeros({2})}});
  CHECK_THROWS_WITH(load_tomoe_moe(plain), Catch::Contains("is not a ToMoE MoE export"));
  Transformer unconverted(tomoe_options());
  CHECK_THROWS_WITH(extract_tomoe_moe(unconverted), Catch::Contains("convert the model first"));
}

TEST_CASE("ToMoE export of stories260K on real text equals the gated model (experts, masked W_O, kept q/k, KV cache)",
          "[tomoe][model][export][import]") {
  const std::string shared = MOXLAB_SHARED_DATA;
  const std::string weights = shared + "/models/stories260K/stories260K.bin", tok = "llama2c:" + shared + "/models/stories260K/tok512.bin";
  const std::string text = shared + "/corpora/books/tiny_shakespeare_input.txt";
  if (!std::filesystem::exists(weights) || !std::filesystem::exists(text)) {
    WARN("skipping: ../shared/data not found (stories260K model, tiny Shakespeare)");
    return;
  }
  // The pretrained dense weights under ToMoE gates (random hypernetwork; offset 0 keeps about half of each
  // mask), converted on real text, then the MoE export against the gated model on the next real text.
  ImportedModel dense = import_llama2c(weights, tok);
  std::ifstream in(text);
  std::stringstream buf;
  buf << in.rdbuf();
  auto ids = load_tokenizer(tok)->encode(buf.str().substr(0, 8000));
  REQUIRE(ids.size() >= 8 * 64);
  const auto all = torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.begin() + 8 * 64)).view({8, 64});
  const auto calibration = all.narrow(0, 0, 4), tokens = all.narrow(0, 4, 4);
  ModelOptions o = dense.config.model;
  o.attention = o.ffn = "tomoe";
  o.tomoe.offset = 0.0;
  o.tomoe.conversion = "paper";  // K = the mean kept count: about half the head dims (the code rule keeps the widest token's)
  Transformer model(o);
  model.init_weights(3);
  copy_dense_weights(*dense.model, model);
  torch::manual_seed(5);
  const TomoeConversion c = convert_to_tomoe_moe(model, {calibration});
  const TomoeMoePlan moe(extract_tomoe_moe(model));
  // Some layer keeps at most 5 of the 8 head dims (W_O by kept dims) and every FFN is cut.
  CHECK(*std::min_element(c.vo_top_k.begin(), c.vo_top_k.end()) <= 5);
  for (int w : c.mlp_width) CHECK(w < o.resolved_ffn_hidden());
  torch::Tensor gated;
  {
    torch::NoGradGuard ng;
    gated = model.forward(tokens);
  }
  const int before = at::get_num_threads();
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    at::set_num_threads(threads);
    CHECK(torch::allclose(moe.forward(tokens), gated, 1e-4, 1e-4));
    // A 48-token prompt, then one token at a time against the KV cache.
    KvCache cache;
    std::vector<torch::Tensor> parts = {moe.forward(tokens.narrow(1, 0, 48), &cache)};
    for (std::int64_t t = 48; t < 64; ++t) parts.push_back(moe.forward(tokens.narrow(1, t, 1), &cache));
    CHECK(torch::allclose(torch::cat(parts, 1), gated, 1e-4, 1e-4));
  }
  at::set_num_threads(before);
}

TEST_CASE("convert tomoe and prune baselines from a dense checkpoint — conversion keeps every dense weight",
          "[e2e][tomoe][prune]") {
  const std::string dir = scratch_dir("tomoe_distill");
  const std::string ck = train_micro_checkpoint(dir, 12);
  RunStore store(dir + "/runs/runs.db");
  auto tomoe = run_cli("convert tomoe --checkpoint " + ck + " --active 0.6 --steps 6 --set tomoe.experts=4", dir);
  INFO(tomoe.err);
  REQUIRE(tomoe.exit_code == 0);
  // Step 0: every gate keeps everything, so the converted model is the dense model.
  CHECK(store.result(2, "train_start/val/loss")->value == Approx(store.result(2, "init_from/val/loss")->value).epsilon(1e-5));
  CHECK(!store.metrics(2, "train/aux/tomoe.param").empty());
  CHECK(!store.metrics(2, "train/tomoe/active_ratio").empty());
  REQUIRE(store.result(2, "tomoe/active_ratio"));
  CHECK(store.result(2, "tomoe/active_ratio")->value <= 1.0);
  CHECK(store.result(2, "tomoe/layer1/vo_top_k"));
  CHECK(store.result(2, "params/active")->value <= store.result(2, "params/total")->value);
  const LoadedCheckpoint a = load_checkpoint(ck);
  const LoadedCheckpoint b = load_checkpoint(store.artifacts(2, "checkpoint").at(0).path);
  auto* attn = dynamic_cast<TomoeAttention*>(b.model->blocks->ptr<BlockImpl>(0)->attn.get());
  REQUIRE(attn);
  CHECK(attn->masker->inference_top_k().has_value());  // the conversion's top-K is saved with the checkpoint
  // The run's checkpoint as the real MoE, equal to the gated model.
  const std::string converted = store.artifacts(2, "checkpoint").at(0).path;
  auto exported = run_cli("export tomoe --checkpoint " + converted + " --out moe.safetensors", dir);
  INFO(exported.err);
  REQUIRE(exported.exit_code == 0);
  {
    torch::NoGradGuard ng;
    b.model->eval();
    auto tokens = torch::randint(0, 512, {2, 32}, torch::kLong);
    CHECK(torch::allclose(TomoeMoePlan(load_tomoe_moe(dir + "/moe.safetensors")).forward(tokens), b.model->forward(tokens), 1e-4, 1e-5));
  }
  CHECK(one_line_error(run_cli("export tomoe --checkpoint " + ck + " --out x.safetensors", dir), "needs attention and FFN of kind tomoe"));
  auto after = b.model->named_parameters(true);
  int compared = 0;
  for (const auto& p : a.model->named_parameters(true)) {
    INFO(p.key());
    CHECK(torch::equal(after[p.key()], p.value()));
    ++compared;
  }
  CHECK(compared > 10);

  CHECK(store.get_run(2).config_json.find("\"train.loss\":\"distill\"") != std::string::npos);

  CHECK(one_line_error(run_cli("train --config micro.toml --set train.loss=distill", dir), "train.loss = distill needs a teacher"));

  // The static baselines at the same ratio, each a run whose checkpoint evaluates like any other.
  auto wanda = run_cli("prune wanda --checkpoint " + ck + " --active 0.5 --calibration 2", dir);
  INFO(wanda.err);
  REQUIRE(wanda.exit_code == 0);
  CHECK(store.result(3, "prune/active_ratio")->value == Approx(0.5));
  auto eval = run_cli("eval --run 3 --tasks none --no-wikitext --max-val-tokens 2048", dir);
  INFO(eval.err);
  REQUIRE(eval.exit_code == 0);
  CHECK(std::isfinite(store.result(3, "ppl/val/all")->value));
  CHECK(store.result(3, "params/active")->value < store.result(3, "params/total")->value);
  CHECK(one_line_error(run_cli("prune bogus --checkpoint " + ck, dir), "unknown method 'bogus'"));
  CHECK(one_line_error(run_cli("train --config micro.toml --set prune.method=magnitude", dir),
                       "prune.method needs train.init_from"));

  // Baselines as sweep members: prune.method on a train.init_from checkpoint, evaluated like any member,
  // and a table over two sweeps at once.
  std::ofstream(dir + "/baselines.toml") << "name = \"baselines\"\nbase = \"micro.toml\"\nmode = \"list\"\n"
                                            "set = [\"train.init_from=" << ck << "\"]\n"
                                            "[[member]]\nset = [\"run.variant=dense\", \"prune.method=none\", \"prune.active=1\"]\n"
                                            "[[member]]\nset = [\"run.variant=magnitude_50\", \"prune.method=magnitude\", \"prune.active=0.5\"]\n"
                                            "[eval]\ntasks = [\"none\"]\nwikitext = false\nmax_val_tokens = 2048\n";
  auto plan = run_cli("sweep plan baselines.toml", dir);
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  const std::string sweep = std::to_string(std::stoll(plan.out));
  auto ran = run_cli("sweep run " + sweep + " --workers 1 --threads 1", dir);
  INFO(ran.err);
  REQUIRE(ran.exit_code == 0);
  RunFilter pruned;
  pruned.kind = "prune";
  pruned.sweep_id = std::stoll(sweep);
  const auto members = store.find_runs(pruned);
  REQUIRE(members.size() == 2);
  for (const auto& r : members) {
    INFO(r.config_json);
    CHECK(std::isfinite(store.result(r.id, "ppl/val/all")->value));
    const bool dense = r.config_json.find("\"run.variant\":\"dense\"") != std::string::npos;
    CHECK(store.result(r.id, "prune/active_ratio")->value == Approx(dense ? 1.0 : 0.5));
  }
  std::ofstream(dir + "/t.toml") << "title = \"t\"\n[layout]\nrows = [\"run.variant\"]\n[[column]]\nmetric = \"prune/active_ratio\"\n";
  CHECK(one_line_error(run_cli("table t.toml --sweep " + sweep + ",99", dir), "99"));  // an absent sweep is named
  // Two references, one sweep: rows once each (--allow-mixed-builds: a development tree's build is dirty).
  auto table = run_cli("table t.toml --allow-mixed-builds --sweep baselines," + sweep, dir);
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("magnitude_50") != std::string::npos);
  CHECK(one_line_error(run_cli("prune shortgpt --checkpoint " + ck + " --active 0", dir), "--active must be in (0, 1]"));
  CHECK(one_line_error(run_cli("convert tomoe --checkpoint nowhere.pt", dir), "checkpoint nowhere.pt does not exist"));
  CHECK(one_line_error(run_cli("convert tomoe --checkpoint " + ck + " --active 1.5", dir), "--active must be in (0, 1]"));
  CHECK(one_line_error(run_cli("convert tomoe --checkpoint " + ck + " --set tomoe.bogus=1", dir), "tomoe.bogus"));
}
