// Trainer pieces with exact expected values: the LR schedule, the deterministic data order,
// checkpoints (round trip, truncation), chunked perplexity and the zero-shot scorer.
#include "tests/torch_catch.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/common/error.h"
#include "core/eval/perplexity.h"
#include "core/eval/scorer.h"
#include "core/eval/unigram_baseline.h"
#include "core/train/batch_sampler.h"
#include "core/train/lm_objective.h"
#include "core/train/checkpoint.h"
#include "core/train/lr_schedule.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;

namespace {
Config micro_config() {
  Config c;
  c.model = test::tiny_model(8, 10);
  c.model.n_layers = 1;
  c.model.n_heads = 2;
  c.model.n_kv_heads = 1;
  c.train.seq_len = 8;
  return c;
}
std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "moxlab_tests";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}
}  // namespace

TEST_CASE("Warmup is linear and the cosine reaches the floor", "[train]") {
  CHECK(lr_at(0, 1.0, 10, 110, 0.1) == Approx(0.1));
  CHECK(lr_at(9, 1.0, 10, 110, 0.1) == Approx(1.0));
  CHECK(lr_at(10, 1.0, 10, 110, 0.1) == Approx(1.0));
  CHECK(lr_at(60, 1.0, 10, 110, 0.1) == Approx(0.55));  // halfway: floor + (peak - floor) / 2
  CHECK(lr_at(110, 1.0, 10, 110, 0.1) == Approx(0.1));
  CHECK(lr_at(500, 1.0, 10, 110, 0.1) == Approx(0.1));
}

TEST_CASE("Batch windows are a pure function of (seed, step, micro) and stay in bounds", "[train]") {
  BatchSampler s({100, 0, 50}, 9, 42);
  CHECK(s.valid_starts() == (100 - 8) + (50 - 8));
  auto a = s.windows(5, 1, 64), b = s.windows(5, 1, 64), c = s.windows(6, 1, 64);
  bool same = true, differs = false;
  int seen_domain2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same &= a[i].domain == b[i].domain && a[i].start == b[i].start;
    differs |= a[i].start != c[i].start;
    CHECK(a[i].domain != 1);
    CHECK(a[i].start + 9 <= (a[i].domain == 0 ? 100 : 50));
    seen_domain2 += a[i].domain == 2;
  }
  CHECK(same);
  CHECK(differs);
  CHECK(seen_domain2 > 0);
  CHECK_THROWS_AS(BatchSampler({5}, 9, 1), Error);
}

TEST_CASE("Checkpoints round-trip and truncation is a clear error", "[train][checkpoint]") {
  Config cfg = micro_config();
  Transformer m(cfg.model);
  m.init_weights(11);
  CheckpointMeta meta;
  meta.config_json = cfg.to_json();
  meta.tokenizer_spec = "bpe:/nowhere.json";
  meta.step = 17;
  const std::string path = temp_path("ck.pt");
  save_checkpoint(path, m, nullptr, meta);
  LoadedCheckpoint ck = load_checkpoint(path);
  CHECK(ck.meta.step == 17);
  CHECK(ck.meta.tokenizer_spec == "bpe:/nowhere.json");
  CHECK(ck.config.hash() == cfg.hash());
  auto x = torch::tensor({{1, 2, 3, 4}}, torch::kLong);
  CHECK(torch::equal(m.forward(x), ck.model->forward(x)));

  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  try {
    load_checkpoint(path);
    FAIL("truncated checkpoint loaded");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(path) != std::string::npos);
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
  { std::ofstream(path) << "not a checkpoint"; }
  CHECK_THROWS_AS(load_checkpoint(path), Error);
  CHECK_THROWS_AS(load_checkpoint(temp_path("missing.pt")), Error);
}

TEST_CASE("A training checkpoint keeps the default generator, so a resumed run draws the noise an uninterrupted one would", "[train][checkpoint]") {
  // ToMoE's Gumbel noise comes from the default generator: without its state a resumed run drew other noise.
  Config cfg = micro_config();
  Transformer m(cfg.model);
  m.init_weights(11);
  torch::optim::AdamW opt(m.parameters(), torch::optim::AdamWOptions(1e-3));
  CheckpointMeta meta;
  meta.config_json = cfg.to_json();
  const std::string path = temp_path("rng.pt");
  torch::manual_seed(3);
  torch::rand({5});  // the draws of the steps before the save
  save_checkpoint(path, m, &opt, meta);
  const auto uninterrupted = torch::rand({16});
  torch::manual_seed(99);  // a new process seeds anew (the model's init)
  CHECK_FALSE(torch::equal(torch::rand({16}), uninterrupted));
  torch::optim::AdamW resumed(m.parameters(), torch::optim::AdamWOptions(1e-3));
  CHECK(load_training_state(path, resumed));
  CHECK(torch::equal(torch::rand({16}), uninterrupted));
  const std::string weights_only = temp_path("weights.pt");
  save_checkpoint(weights_only, m, nullptr, meta);  // an export, not a training checkpoint
  CHECK_THROWS_WITH(load_training_state(weights_only, resumed), Catch::Contains("no optimiser state"));
}

TEST_CASE("Perplexity of a uniform model equals the vocabulary size", "[eval]") {
  Config cfg = micro_config();
  Transformer m(cfg.model);
  for (auto& p : m.parameters()) p.data().zero_();  // zero output head → uniform predictions
  VectorTokenSource src;
  src.add("d", {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2}, 40);
  auto r = evaluate_perplexity(m, src, 0, 8, 0, 2);
  CHECK(r.tokens == 19);  // every token but the first is predicted once
  CHECK(r.ppl() == Approx(10.0));
  CHECK(r.bpb() == Approx(19 * std::log(10.0) / (std::log(2.0) * 40)));
  CHECK(r.entropy() == Approx(std::log(10.0)));  // uniform over 10 tokens: entropy ln 10 = its loss
  auto limited = evaluate_perplexity(m, src, 0, 8, 10, 4);
  CHECK(limited.tokens == 9);
}

TEST_CASE("Predictive entropy is the direct sum over the perplexity windows", "[eval]") {
  Transformer m(test::tiny_model(32, 40));
  m.init_weights(3);
  std::vector<std::int32_t> tokens(20);
  for (int i = 0; i < 20; ++i) tokens[i] = (i * 7 + 3) % 40;
  VectorTokenSource src;
  src.add("d", tokens);
  const auto r = evaluate_perplexity(m, src, 0, 8, 0, 4);
  // Windows [0, 9), [8, 17), [16, 20): contexts of 8, 8 and 3 tokens.
  torch::NoGradGuard ng;
  m.eval();
  double want = 0;
  for (const auto& [start, len] : std::vector<std::pair<int, int>>{{0, 8}, {8, 8}, {16, 3}}) {
    const auto context = torch::tensor(std::vector<std::int64_t>(tokens.begin() + start, tokens.begin() + start + len)).unsqueeze(0);
    const auto logp = torch::log_softmax(m.forward(context).to(torch::kDouble), -1);
    want -= (logp.exp() * logp).sum().item<double>();
  }
  REQUIRE(r.tokens == 19);
  CHECK(r.entropy() == Approx(want / 19).epsilon(1e-4));
  // Skipping the entropy (the trainer's validation reads only the loss) leaves the loss as it was.
  const auto lean = evaluate_perplexity(m, src, 0, 8, 0, 4, {}, Form::automatic, Entropy::skipped);
  CHECK(lean.nll_sum == r.nll_sum);
  CHECK(lean.entropy_sum == 0);
  // At temperature 2 the logits are halved before the softmax: flatter, so more entropy. Both
  // temperatures come from one pass; temperature 1 is the model as it is.
  const auto both = evaluate_perplexity_at_temperatures(m, src, 0, 8, 0, 4, {1.0, 2.0});
  REQUIRE(both.size() == 2);
  CHECK(both[0].nll_sum == r.nll_sum);
  CHECK(both[0].entropy_sum == r.entropy_sum);
  const PerplexityResult& hot = both[1];
  CHECK(hot.tokens == 19);
  double hot_nll = 0, hot_entropy = 0;
  for (const auto& [start, len] : std::vector<std::pair<int, int>>{{0, 8}, {8, 8}, {16, 3}}) {
    const auto context = torch::tensor(std::vector<std::int64_t>(tokens.begin() + start, tokens.begin() + start + len)).unsqueeze(0);
    const auto targets = torch::tensor(std::vector<std::int64_t>(tokens.begin() + start + 1, tokens.begin() + start + len + 1));
    const auto logp = torch::log_softmax(m.forward(context).to(torch::kDouble) / 2.0, -1).squeeze(0);
    hot_nll -= logp.gather(-1, targets.unsqueeze(-1)).sum().item<double>();
    hot_entropy -= (logp.exp() * logp).sum().item<double>();
  }
  CHECK(hot.loss() == Approx(hot_nll / 19).epsilon(1e-4));
  CHECK(hot.entropy() == Approx(hot_entropy / 19).epsilon(1e-4));
  CHECK(hot.entropy() > r.entropy());
  CHECK(r.entropy() > 0);
  CHECK(r.entropy() < std::log(40.0));  // below uniform's ln 40: a random model is not uniform
}

TEST_CASE("The model scorer sums continuation log-probs and detects greedy continuations", "[eval]") {
  Config cfg = micro_config();
  Transformer m(cfg.model);
  for (auto& p : m.parameters()) p.data().zero_();
  auto score = make_model_scorer(m, 8, 3);
  std::vector<LoglikelihoodRequest> reqs = {{{1, 2}, {0, 0}}, {{1}, {3}}, {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {4, 5, 6}}};
  auto res = score(reqs);
  REQUIRE(res.size() == 3);
  CHECK(res[0].logprob == Approx(-2 * std::log(10.0)));
  CHECK(res[0].greedy);  // argmax of all-equal logits is token 0
  CHECK(res[1].logprob == Approx(-std::log(10.0)));
  CHECK_FALSE(res[1].greedy);
  CHECK(res[2].logprob == Approx(-3 * std::log(10.0)));  // left-truncated to 9 tokens, still scored
}

TEST_CASE("The unigram baseline is add-one smoothed train frequency", "[eval]") {
  VectorTokenSource train, val;
  train.add("d", {0, 0, 1, 2});     // counts+1: 3, 2, 2, 1 over 4 + 4 = 8
  val.add("d", {3, 0, 1});          // scored: tokens 0 and 1 (the first is context only)
  UnigramBaseline u(train, 4);
  CHECK(u.log_prob(0) == Approx(std::log(3.0 / 8)));
  CHECK(u.log_prob(3) == Approx(std::log(1.0 / 8)));
  auto r = u.evaluate(val, 0, 0);
  CHECK(r.tokens == 2);
  CHECK(r.nll_sum == Approx(-std::log(3.0 / 8) - std::log(2.0 / 8)));
  const double h = -(3.0 / 8 * std::log(3.0 / 8) + 2 * (2.0 / 8 * std::log(2.0 / 8)) + 1.0 / 8 * std::log(1.0 / 8));
  CHECK(r.entropy() == Approx(h));  // the same distribution predicts every position
}

TEST_CASE("train.domains draws training windows from the chosen domains only, validation covers all", "[train][data]") {
  Config c = micro_config();
  c.train.batch_size = 4;
  c.train.domains = {"b"};
  auto train = std::make_shared<VectorTokenSource>(), val = std::make_shared<VectorTokenSource>();
  train->add("a", std::vector<std::int32_t>(64, 1));  // domain a is all 1s, b all 2s
  train->add("b", std::vector<std::int32_t>(64, 2));
  val->add("a", std::vector<std::int32_t>(32, 1));
  val->add("b", std::vector<std::int32_t>(32, 2));
  auto model = std::make_shared<Transformer>(c.model);
  model->init_weights(1);
  LmObjective restricted(c, model, train, val);
  for (int step = 0; step < 8; ++step) CHECK(restricted.batch(step, 0).first.eq(2).all().item<bool>());
  std::vector<std::string> keys;
  for (const auto& [key, value] : restricted.validate()) keys.push_back(key);
  CHECK(std::find(keys.begin(), keys.end(), "val/a/loss") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "val/b/loss") != keys.end());
  c.train.domains.clear();  // the default mixes both
  LmObjective mixed(c, model, train, val);
  bool saw_a = false;
  for (int step = 0; step < 8; ++step) saw_a = saw_a || mixed.batch(step, 0).first.eq(1).any().item<bool>();
  CHECK(saw_a);
  c.train.domains = {"c"};
  CHECK_THROWS_WITH(LmObjective(c, model, train, val), Catch::Contains("unknown domain 'c'"));
}
