// Incremental decoding with a KV cache: a sequence run as a prompt and then one token at a time gives the
// logits of running it whole, for every attention kind (dense, MoHD in both kernel forms, MoH, ToMoE's
// gated model and its converted MoE), and generate() with the cache equals recomputing every prefix,
// across the end of the context window too.
#include "tests/torch_catch.h"

#include "core/engine/generate.h"
#include "core/engine/kv_cache.h"
#include "core/engine/tomoe_moe_plan.h"
#include "core/model/transformer.h"
#include "experiments/bench/tomoe_bench_model.h"
#include "tests/model/mohd_support.h"
#include "tests/model/tiny_model.h"

using namespace moxlab;
using moxlab::testing::mohd;

namespace {

ModelOptions options(const std::string& kind, int dim = 48) {
  ModelOptions o = test::tiny_model(dim, 40);
  if (kind == "mohd") {
    o.attention = o.ffn = "mohd";
    o.mohd_attn = o.mohd_ffn = mohd(8, 4, 3, 8);
  } else if (kind == "moh") {
    o.attention = "moh";
    o.moh.shared = 1;
    o.moh.active = 2;
  } else if (kind == "tomoe") {
    o.attention = o.ffn = "tomoe";
  }
  return o;
}

// Logits of tokens [B, T] run as a 5-token prompt and then one token at a time.
template <class Forward>
torch::Tensor incremental(const torch::Tensor& tokens, Forward forward) {
  KvCache cache;
  std::vector<torch::Tensor> parts = {forward(tokens.narrow(1, 0, 5), &cache)};
  for (std::int64_t t = 5; t < tokens.size(1); ++t) parts.push_back(forward(tokens.narrow(1, t, 1), &cache));
  CHECK(cache.length() == tokens.size(1));
  return torch::cat(parts, 1);
}

// Greedy continuation recomputing the last max_seq_len tokens every step (what generate() did before the cache).
std::vector<std::int32_t> greedy_recompute(Transformer& m, std::vector<std::int64_t> seq, int n) {
  InferencePlan plan(m);
  std::vector<std::int32_t> out;
  for (int i = 0; i < n; ++i) {
    const long start = std::max<long>(0, static_cast<long>(seq.size()) - m.options().max_seq_len);
    auto x = torch::tensor(std::vector<std::int64_t>(seq.begin() + start, seq.end())).view({1, -1});
    const auto next = plan.forward(x).select(1, -1).squeeze(0).argmax().item<std::int64_t>();
    out.push_back(static_cast<std::int32_t>(next));
    seq.push_back(next);
  }
  return out;
}

}  // namespace

TEST_CASE("A KV cache reproduces whole-sequence logits (dense, MoHD, MoH, ToMoE)", "[kv_cache]") {
  // On two threads: the decode steps' products (2 rows) split the weights' panels between them, and at
  // d 192 (12 panels, MoHD blocks of 24) each thread gets its own part.
  const int before = at::get_num_threads();
  at::set_num_threads(2);
  torch::manual_seed(11);
  const auto tokens = torch::randint(0, 40, {2, 12}, torch::kLong);
  torch::NoGradGuard ng;
  for (int dim : {48, 192}) {
    for (const std::string kind : {"dense", "mohd", "moh", "tomoe"}) {
      for (Form k : {Form::reference, Form::sparse}) {
        INFO(kind << " d " << dim << (k == Form::sparse ? " sparse" : " reference"));
        Transformer m(options(kind, dim));
        m.init_weights(5);
        m.eval();
        InferencePlan plan(m);
        ExecOptions whole;
        whole.form = k;
        const auto full = plan.forward(tokens, whole);
        const auto pieces = incremental(tokens, [&](const torch::Tensor& x, KvCache* cache) {
          ExecOptions exec;
          exec.form = k;
          exec.cache = cache;
          return plan.forward(x, exec);
        });
        CHECK(torch::allclose(pieces, full, 1e-4, 1e-5));
        CHECK(torch::allclose(full, m.forward(tokens), 1e-4, 1e-5));  // the engine's forms equal the model's math
      }
    }
    // The converted ToMoE model (kept q/k pairs rotated with their own frequencies); W_O by kept dims at
    // half of them, whole at 80%.
    for (double keep : {0.5, 0.8}) {
      INFO("converted ToMoE d " << dim << " keep " << keep);
      const TomoeMoePlan moe(random_tomoe_moe(options("dense", dim), keep, 3));
      const auto full = moe.forward(tokens);
      CHECK(torch::allclose(incremental(tokens, [&](const torch::Tensor& x, KvCache* cache) { return moe.forward(x, cache); }), full,
                            1e-4, 1e-5));
    }
  }
  at::set_num_threads(before);
}

TEST_CASE("generate() with the KV cache equals recomputing every prefix, across the context window", "[kv_cache]") {
  for (const std::string kind : {"dense", "mohd", "moh"}) {
    INFO(kind);
    Transformer m(options(kind));
    m.init_weights(6);
    m.eval();
    torch::NoGradGuard ng;
    GenerateOptions g;
    g.max_new_tokens = 14;  // prompt 6 + 14 passes max_seq_len 16: the last steps slide the window
    const std::vector<std::int32_t> prompt = {1, 7, 3, 9, 2, 5};
    InferencePlan plan(m);
    CHECK(generate(plan, prompt, g) == greedy_recompute(m, std::vector<std::int64_t>(prompt.begin(), prompt.end()), 14));
  }
}

TEST_CASE("KvCache bookkeeping: length, truncate, clear", "[kv_cache]") {
  KvCache cache;
  CHECK(cache.length() == 0);
  int a = 0, b = 0;
  append_kv(cache.at(&a), torch::ones({1, 3, 2, 4}), torch::ones({1, 3, 2, 4}));
  append_kv(cache.at(&b), torch::ones({1, 3, 2, 4}), torch::ones({1, 3, 2, 4}));
  auto [k, v] = append_kv(cache.at(&a), torch::zeros({1, 2, 2, 4}), torch::zeros({1, 2, 2, 4}));
  CHECK(k.size(1) == 5);
  CHECK(k.narrow(1, 0, 3).eq(1).all().item<bool>());
  CHECK(k.narrow(1, 3, 2).eq(0).all().item<bool>());
  cache.truncate(2);
  CHECK(cache.length() == 2);
  CHECK(cache.at(&a).v.size(1) == 2);
  CHECK_THROWS_WITH(cache.truncate(3), Catch::Contains("cannot keep 3 of 2 positions"));
  cache.clear();
  CHECK(cache.length() == 0);
}

TEST_CASE("KvCache appends in place, grows by doubling and equals concatenation", "[kv_cache]") {
  // Two sequences (batch 2), so the returned views are strided: the buffers hold more positions than used.
  torch::manual_seed(3);
  KvCache cache;
  int owner = 0;
  KvCache::Entry& e = cache.at(&owner);
  torch::Tensor all_k, all_v;
  const float* room = nullptr;
  int moves = 0;
  for (int step = 0; step < 40; ++step) {
    const std::int64_t t = step == 0 ? 5 : 1;  // a prompt, then one position at a time
    const auto k = torch::randn({2, t, 3, 4}), v = torch::randn({2, t, 3, 4});
    all_k = all_k.defined() ? torch::cat({all_k, k}, 1) : k;
    all_v = all_v.defined() ? torch::cat({all_v, v}, 1) : v;
    const auto [ck, cv] = append_kv(e, k, v);
    REQUIRE(ck.size(1) == all_k.size(1));
    CHECK(torch::equal(ck, all_k));
    CHECK(torch::equal(cv, all_v));
    if (e.k_room.data_ptr<float>() != room) ++moves;
    room = e.k_room.data_ptr<float>();
    CHECK(e.k_room.size(1) >= ck.size(1));
  }
  // 44 positions: the buffers hold 16, then 34, then 70 positions: allocated three times, not 40.
  CHECK(moves == 3);
  // Truncating keeps the buffers; the next append overwrites the positions cut off.
  cache.truncate(10);
  const auto k = torch::full({2, 1, 3, 4}, 7.0f), v = torch::full({2, 1, 3, 4}, 8.0f);
  const auto [ck, cv] = append_kv(e, k, v);
  CHECK(e.k_room.data_ptr<float>() == room);
  CHECK(torch::equal(ck, torch::cat({all_k.narrow(1, 0, 10), k}, 1)));
  CHECK(torch::equal(cv, torch::cat({all_v.narrow(1, 0, 10), v}, 1)));
  CHECK_THROWS_WITH(append_kv(e, torch::zeros({1, 1, 3, 4}), torch::zeros({1, 1, 3, 4})), Catch::Contains("do not match"));
  CHECK_THROWS_WITH(append_kv(e, torch::zeros({2, 1, 3, 4}), torch::zeros({2, 2, 3, 4})), Catch::Contains("same B and T"));
}
