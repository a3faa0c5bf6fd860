// core/observe/router_domains (MoHD Fig. 11): per-domain selection fractions and mean router scores
// against hand counts, and a synthetic capture round-tripped through the routing file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include "core/common/error.h"
#include "core/observe/router_domains.h"
#include "core/store/tensor_log.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {
// 5 tokens, N = 3 sub-dims (sub-dim 0 shared), domains: code (0), books (1), legal (2, no tokens).
//   token  domain  probs            active
//   0      code    .5 .3 .2         1 1 0
//   1      code    .4 .2 .4         1 0 1
//   2      books   .6 .3 .1         1 1 0
//   3      books   .2 .7 .1         1 1 0
//   4      code    .1 .1 .8         1 0 1
const std::vector<float> kProbs = {.5f, .3f, .2f, .4f, .2f, .4f, .6f, .3f, .1f, .2f, .7f, .1f, .1f, .1f, .8f};
const std::vector<float> kActive = {1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 1};
const std::vector<std::int32_t> kDomain = {0, 0, 1, 1, 0};
const std::vector<std::string> kNames = {"code", "books", "legal"};
}  // namespace

TEST_CASE("routing: per-domain selection fraction and mean score match hand counts", "[observe][routing]") {
  const RouterDomainStats s = router_domain_stats("blocks.1.attn", kProbs, kActive, 5, 3, kDomain, kNames);
  REQUIRE(s.domains == std::vector<std::string>{"code", "books"});  // legal has no tokens
  CHECK(s.tokens == std::vector<std::int64_t>{3, 2});
  // code: sub-dim 1 chosen by token 0 only (1/3), sub-dim 2 by tokens 1 and 4 (2/3); books: sub-dim 1 always.
  const std::vector<double> selected = {1, 1.0 / 3, 2.0 / 3, 1, 1, 0};
  for (std::size_t i = 0; i < selected.size(); ++i) CHECK(s.selected[i] == Approx(selected[i]));
  // code mean scores: (.5+.4+.1)/3, (.3+.2+.1)/3, (.2+.4+.8)/3; books: (.6+.2)/2, (.3+.7)/2, (.1+.1)/2.
  const std::vector<double> score = {1.0 / 3, 0.2, 1.4 / 3, 0.4, 0.5, 0.1};
  for (std::size_t i = 0; i < score.size(); ++i) CHECK(s.score[i] == Approx(score[i]).epsilon(1e-6));
  // Largest cross-domain gap: sub-dim 1 (1 - 1/3) and sub-dim 2 (2/3 - 0) both 2/3.
  CHECK(s.spread() == Approx(2.0 / 3));
  // Mean over the two domains: sub-dim 0: 1, 1: (1/3 + 1)/2 = 2/3, 2: (2/3 + 0)/2 = 1/3 -> least used 1/3.
  CHECK(s.least_used() == Approx(1.0 / 3));
  CHECK_THROWS_WITH(router_domain_stats("r", kProbs, kActive, 5, 3, {0, 0, 1, 1}, kNames), Contains("disagree in size"));
  CHECK_THROWS_WITH(router_domain_stats("r", kProbs, kActive, 5, 3, {0, 0, 1, 7, 0}, kNames), Contains("out of range"));
}

TEST_CASE("routing: a synthetic capture round-trips through the routing file", "[observe][routing]") {
  moxlab::testing::ScratchDir dir("routing");
  const std::string cap = dir.file("cap.h5"), out = dir.file("cap.routing.h5");
  {
    TensorLogWriter w(cap);
    w.set_attr_int("/", "run_id", 7);
    for (const char* r : {"blocks.1.ffn", "blocks.0.attn", "blocks.1.attn"}) {
      w.write(std::string("/probes/") + r + ".router.probs", kProbs.data(), {5, 3});
      w.write(std::string("/probes/") + r + ".router.topk", kActive.data(), {5, 3});
    }
    w.write("/probes/blocks.0.attn.out", kProbs.data(), {5, 3});  // not a router: ignored
    w.write("/domain", kDomain);
    w.write_strings("/domain_names", kNames);
    w.finish();
  }
  const RoutingReport rep = observe_routing(cap, out);
  CHECK(rep.run_id == 7);
  REQUIRE(rep.routers.size() == 3);
  CHECK(rep.routers[0].router == "blocks.0.attn");  // layer order, attn before ffn
  CHECK(rep.routers[1].router == "blocks.1.attn");
  CHECK(rep.routers[2].router == "blocks.1.ffn");
  CHECK(rep.results.size() == 3 * (2 * 2 * 3 + 2));
  bool found = false;
  for (const auto& r : rep.results)
    if (r.key == "routing/selected/blocks.1.ffn/code/2") {
      found = true;
      CHECK(r.value == Approx(2.0 / 3));
      CHECK_THAT(r.meta_json, Contains("selection_fraction"));
    }
  CHECK(found);

  TensorLogReader in(out);
  CHECK(in.read_strings("/domain_names") == std::vector<std::string>{"code", "books"});
  CHECK(in.shape("/routing/blocks.1.attn/selected") == std::vector<std::uint64_t>{2, 3});
  CHECK(in.read<double>("/routing/blocks.1.attn/selected")[2] == Approx(2.0 / 3));
  CHECK(in.read<std::int64_t>("/routing/blocks.0.attn/tokens") == std::vector<std::int64_t>{3, 2});
  CHECK(in.attr_double("/routing/blocks.0.attn/selected", "spread") == Approx(2.0 / 3));
}

TEST_CASE("routing: a capture without router taps is a one-line error and writes nothing", "[observe][routing]") {
  moxlab::testing::ScratchDir dir("routing_bad");
  const std::string cap = dir.file("cap.h5"), out = dir.file("cap.routing.h5");
  {
    TensorLogWriter w(cap);
    w.write("/probes/blocks.0.attn.out", kProbs.data(), {5, 3});
    w.write("/domain", kDomain);
    w.write_strings("/domain_names", kNames);
    w.finish();
  }
  CHECK_THROWS_WITH(observe_routing(cap, out), Contains("no MoHD router taps"));
  CHECK_THROWS_WITH(observe_routing(dir.file("absent.h5"), out), Contains("no capture file"));
  CHECK_FALSE(std::filesystem::exists(out));
}
