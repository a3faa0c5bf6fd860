// The static pruning baselines (core/prune): the 2:4 mask, structure scores and their selection by hand,
// width pruning zeroing exactly the pruned structures at the target ratio, ShortGPT's choice of blocks
// and a removed block being the identity (block influence 0); the live-weight count read back from the
// zeros, by hand and against each method's own accounting.
#include "tests/torch_catch.h"

#include "core/common/error.h"
#include "core/prune/calibration_stats.h"
#include "core/prune/dense_layers.h"
#include "core/prune/layer_pruning.h"
#include "core/prune/live_weights.h"
#include "core/prune/prune.h"
#include "core/prune/semi_structured.h"
#include "core/prune/width_pruning.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

namespace {
ModelOptions small_options() {
  ModelOptions o = test::tiny_model(8, 40);
  o.n_layers = 1;
  o.n_heads = 2;
  o.n_kv_heads = 1;
  o.ffn_hidden = 4;
  return o;
}
}  // namespace

TEST_CASE("2:4 mask keeps the two largest scores of every group of four columns", "[prune]") {
  auto score = torch::tensor({1.0f, 4.0f, 2.0f, 3.0f, 8.0f, 5.0f, 6.0f, 7.0f}).reshape({1, 8});
  auto m = n_m_mask(score, 2, 4);
  CHECK(torch::equal(m, torch::tensor({0.0f, 1.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.0f, 1.0f}).reshape({1, 8})));
  CHECK(n_m_mask(torch::rand({5, 12}), 2, 4).sum().item<float>() == 30.0f);  // exactly half
  CHECK_THROWS_AS(n_m_mask(torch::rand({2, 6}), 2, 4), Error);
}

TEST_CASE("Structure scores sum the importance each structure owns — the best half is kept (hand computed)", "[prune]") {
  const ModelOptions o = small_options();  // head_dim 4: two RoPE pairs; d_mid 4
  LayerImportance i;
  i.wq = torch::arange(8, torch::kDouble).unsqueeze(1).expand({8, 8}).contiguous();  // row r holds r
  i.wk = torch::ones({4, 8}, torch::kDouble);
  i.wv = (10 - torch::arange(4, torch::kDouble)).unsqueeze(1).expand({4, 8}).contiguous();
  i.wo = torch::zeros({8, 8}, torch::kDouble);
  i.w1 = torch::zeros({4, 8}, torch::kDouble);
  i.w3 = torch::zeros({4, 8}, torch::kDouble);
  i.w2 = torch::arange(4, torch::kDouble).unsqueeze(0).expand({8, 4}).contiguous();  // column c holds c
  const auto s = structure_scores({i}, o);
  // q/k dim d: W_Q rows d and 4 + d (8d + 8(4 + d)) plus W_K row d (8): 16d + 40; pairs (0,1), (2,3).
  CHECK(torch::allclose(s[0].qk_pairs, torch::tensor({96.0, 160.0}, torch::kDouble)));
  CHECK(torch::allclose(s[0].vo_dims, torch::tensor({80.0, 72.0, 64.0, 56.0}, torch::kDouble)));
  CHECK(torch::allclose(s[0].channels, torch::tensor({0.0, 8.0, 16.0, 24.0}, torch::kDouble)));
  const auto keep = keep_best(s, 0.5);
  CHECK(torch::equal(keep[0].qk, torch::tensor({0.0f, 0.0f, 1.0f, 1.0f})));
  CHECK(torch::equal(keep[0].vo, torch::tensor({1.0f, 1.0f, 0.0f, 0.0f})));
  CHECK(torch::equal(keep[0].mlp, torch::tensor({0.0f, 0.0f, 1.0f, 1.0f})));
  CHECK(width_active_ratio(o, keep) == Approx(0.5));
  CHECK_THROWS_AS(keep_best(s, 0.0), Error);
}

TEST_CASE("Width pruning zeroes exactly the pruned rows and columns", "[prune]") {
  const ModelOptions o = small_options();
  Transformer model(o);
  model.init_weights(1);
  auto* a = dynamic_cast<DenseAttention*>(model.blocks->ptr<BlockImpl>(0)->attn.get());
  auto* f = dynamic_cast<SwiGLU*>(model.blocks->ptr<BlockImpl>(0)->ffn.get());
  auto wq = a->wq->weight.clone(), wo = a->wo->weight.clone(), w2 = f->w2->weight.clone();
  LayerKeep k{torch::tensor({0.0f, 0.0f, 1.0f, 1.0f}), torch::tensor({1.0f, 0.0f, 1.0f, 0.0f}), torch::tensor({0.0f, 1.0f, 1.0f, 1.0f})};
  apply_width_pruning(model, {k});
  for (int h = 0; h < 2; ++h) {
    CHECK(a->wq->weight[h * 4].abs().sum().item<float>() == 0.0f);
    CHECK(torch::equal(a->wq->weight[h * 4 + 2], wq[h * 4 + 2]));
    CHECK(a->wo->weight.select(1, h * 4 + 1).abs().sum().item<float>() == 0.0f);
    CHECK(torch::equal(a->wo->weight.select(1, h * 4 + 2), wo.select(1, h * 4 + 2)));
  }
  CHECK(f->w2->weight.select(1, 0).abs().sum().item<float>() == 0.0f);
  CHECK(torch::equal(f->w2->weight.select(1, 3), w2.select(1, 3)));
}

TEST_CASE("ShortGPT removes the lowest-influence blocks — a removed block is the identity", "[prune]") {
  CHECK(blocks_to_remove({0.3, 0.1, 0.5, 0.2}, 0.5) == std::vector<int>{1, 3});
  CHECK(blocks_to_remove({0.3, 0.1, 0.5, 0.2}, 1.0).empty());
  CHECK(blocks_to_remove({0.3, 0.1}, 0.01) == std::vector<int>{1});  // one block always stays
  ModelOptions o = small_options();
  o.n_layers = 2;
  Transformer model(o);
  model.init_weights(2);
  remove_blocks(model, {1});
  torch::manual_seed(3);
  auto x = torch::randn({2, 5, 8});
  Analysis an;
  torch::NoGradGuard ng;
  LayerIO io;
  CHECK(torch::allclose(model.blocks->ptr<BlockImpl>(1)->forward(x, model.rope(), an, io), x));
  const auto stats = calibrate(model, {torch::randint(0, 40, {2, 9}, torch::kLong)});
  CHECK(stats.block_influence[1] == Approx(0.0).margin(1e-9));
  CHECK(stats.block_influence[0] > 1e-4);
  CHECK(stats.norms[0].ffn_act.size(0) == 4);
  CHECK_THROWS_WITH(prune_model(model, "bogus", 0.5, {}), Catch::Contains("unknown method 'bogus'"));
  CHECK_THROWS_WITH(prune_model(model, "wanda_2_4", 0.6, {}), Catch::Contains("use --active 0.5"));
}

TEST_CASE("Live matrix weights: a zero factor kills its structure (hand computed)", "[prune]") {
  const ModelOptions o = small_options();  // dim 8, 2 heads sharing 1 kv head of width 4, d_mid 4
  Transformer model(o);
  model.init_weights(4);
  auto& a = *dynamic_cast<DenseAttention*>(model.blocks->ptr<BlockImpl>(0)->attn.get());
  auto& f = *dynamic_cast<SwiGLU*>(model.blocks->ptr<BlockImpl>(0)->ffn.get());
  // Dense: W_Q 8x8, W_K 4x8, W_V 4x8, W_O 8x8, W_G/W_U 4x8, W_D 8x4.
  CHECK(live_matrix_weights(model).live == 64 + 32 + 32 + 64 + 3 * 32);
  CHECK(live_matrix_weights(model).total == 288);
  torch::NoGradGuard no_grad;
  f.w2->weight.select(1, 1).zero_();  // channel 1's W_D column: its W_G and W_U rows go with it (-24)
  f.w1->weight[2][5] = 0;             // one zero weight inside a live channel (-1)
  a.wo->weight.select(1, 4 + 0).zero_();  // head 1's output dim 0: still read by head 0, so W_V row 0 stays (-8)
  a.wk->weight[2].zero_();            // K row 2; row 3 keeps RoPE pair (2, 3) live in both heads (-8)
  CHECK(live_matrix_weights(model).live == 288 - 24 - 1 - 8 - 8);
  a.wo->weight.select(1, 0).zero_();  // now no head reads V row 0 (-8 for W_O, -8 for W_V)
  CHECK(live_matrix_weights(model).live == 288 - 24 - 1 - 8 - 8 - 16);
  a.wk->weight[3].zero_();  // pair (2, 3) has no key: W_Q rows 2, 3 of both heads die (-8 W_K, -32 W_Q)
  CHECK(live_matrix_weights(model).live == 288 - 24 - 1 - 8 - 8 - 16 - 8 - 32);
  a.wo->weight.narrow(1, 4, 4).zero_();  // head 1 writes nothing: its W_Q rows die (the live pair 0, 1: -16)
  CHECK(live_matrix_weights(model).live == 288 - 24 - 1 - 8 - 8 - 16 - 8 - 32 - 24 - 16);
}

namespace {
std::int64_t nonzero_matrix_weights(Transformer& model) {
  std::int64_t n = 0;
  for (int l = 0; l < model.options().n_layers; ++l) {
    auto& a = dense_attention(model, l);
    auto& f = dense_swiglu(model, l);
    for (const auto* lin : {&a.wq, &a.wk, &a.wv, &a.wo, &f.w1, &f.w2, &f.w3})
      n += (*lin)->weight.ne(0).sum().item<std::int64_t>();
  }
  return n;
}
}  // namespace

TEST_CASE("Live matrix weights of a random model pruned by each method match its active ratio", "[prune]") {
  ModelOptions o = test::tiny_model(16, 40);
  o.ffn_hidden = 16;
  const std::vector<torch::Tensor> calibration{torch::randint(0, 40, {2, 9}, torch::kLong)};
  for (const std::string method : {"magnitude", "wanda", "taylor", "shortgpt"}) {
    Transformer model(o);
    model.init_weights(5);
    const PruneResult r = prune_model(model, method, 0.5, calibration);
    const MatrixWeights m = live_matrix_weights(model);
    INFO(method);
    CHECK(static_cast<double>(m.live) / m.total == Approx(r.active_ratio).margin(1e-12));
  }
}

TEST_CASE("2:4 zeroes exactly half of the weights, and a channel it drops from every row of W_D takes its W_G, W_U rows along", "[prune]") {
  // Wanda's 2:4 picks weights, not structures: where a SwiGLU channel's activations are much smaller than
  // those of the other three channels of its group of four, every row of W_D may drop it, and its
  // (non-zero) W_G and W_U rows compute nothing. Whether that happens depends on the draw, so the
  // invariant is live <= half.
  ModelOptions o = test::tiny_model(16, 40);
  o.ffn_hidden = 16;
  const std::vector<torch::Tensor> calibration{torch::randint(0, 40, {2, 9}, torch::kLong)};
  Transformer model(o);
  model.init_weights(5);
  const PruneResult r = prune_model(model, "wanda_2_4", 0.5, calibration);
  const MatrixWeights m = live_matrix_weights(model);
  CHECK(r.active_ratio == 0.5);
  CHECK(nonzero_matrix_weights(model) * 2 == m.total);
  CHECK(m.live <= m.total / 2);
  auto& f = dense_swiglu(model, 0);
  torch::NoGradGuard no_grad;
  const auto reaches_w_d = f.w2->weight.ne(0).any(0);
  const std::int64_t c = reaches_w_d.to(torch::kLong).argmax().item<std::int64_t>();  // a live channel
  REQUIRE(reaches_w_d[c].item<bool>());
  const auto channel_weights = f.w1->weight[c].ne(0).sum().item<std::int64_t>() +
                               f.w3->weight[c].ne(0).sum().item<std::int64_t>() +
                               f.w2->weight.select(1, c).ne(0).sum().item<std::int64_t>();
  f.w2->weight.select(1, c).zero_();  // the channel now reaches nothing
  CHECK(live_matrix_weights(model).dead() == m.dead() + channel_weights);
}
