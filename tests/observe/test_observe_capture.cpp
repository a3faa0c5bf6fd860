// core/observe/observe_capture: a tiny synthetic capture (layout of core/capture/capture.h) written with
// TensorLogWriter, observed, and the observations file read back; bad captures are one-line Errors
// that leave no observations file behind.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <vector>

#include "core/common/error.h"
#include "core/observe/observe_capture.h"
#include "core/store/tensor_log.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using Catch::Matchers::Contains;

namespace {
constexpr std::int64_t kTokens = 8, kDims = 4;

// 8 tokens in two windows (positions 0..5 and 0..1). blocks.0.attn.in row t = [t+1, 0, 0.05, -(t+1)],
// blocks.0.attn.out = 0.5 x attn.in (x^2 exactly a quarter), blocks.1.attn.out = 2 x attn.in.
void write_capture(const std::string& path, bool with_position = true, std::int64_t in_rows = kTokens) {
  std::vector<float> in, half, twice;
  for (int t = 0; t < kTokens; ++t)
    for (float v : {t + 1.0f, 0.0f, 0.05f, -(t + 1.0f)}) {
      in.push_back(v);
      half.push_back(0.5f * v);
      twice.push_back(2.0f * v);
    }
  TensorLogWriter w(path);
  w.set_attr_int("/", "run_id", 42);
  w.write("/probes/blocks.0.attn.in", in.data(), {static_cast<std::uint64_t>(in_rows), kDims});
  w.write("/probes/blocks.0.attn.out", half.data(), {kTokens, kDims});
  w.write("/probes/blocks.1.attn.out", twice.data(), {kTokens, kDims});
  w.write("/window", std::vector<std::int32_t>{0, 0, 0, 0, 0, 0, 1, 1});
  if (with_position) w.write("/position", std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 0, 1});
  w.finish();
}

const ObservedResult* find(const ObserveReport& rep, const std::string& key) {
  for (const auto& r : rep.results)
    if (r.key == key) return &r;
  return nullptr;
}
}  // namespace

TEST_CASE("observe: a synthetic capture round-trips through the observations file", "[observe]") {
  moxlab::testing::ScratchDir dir("observe");
  const std::string cap = dir.file("cap.h5"), out = dir.file("cap.observe.h5");
  write_capture(cap);
  const ObserveReport rep = observe_capture(cap, out);
  CHECK(rep.run_id == 42);
  CHECK(rep.tokens == kTokens);
  REQUIRE(rep.taps.size() == 3);
  CHECK(rep.taps[0].tap == "blocks.0.attn.in");  // layer order, then forward order
  CHECK(rep.taps[1].tap == "blocks.0.attn.out");
  CHECK(rep.taps[2].tap == "blocks.1.attn.out");

  TensorLogReader r(out);
  CHECK(r.attr("/", "source") == std::filesystem::absolute(cap).string());
  CHECK(r.attr_int("/", "run_id") == 42);
  CHECK(r.attr_int("/", "layout_version") == 2);
  CHECK(r.attr_double("/", "eps") == Approx(0.01));

  // attn.in x^2: 8 zeros, 8 x 0.0025, then 1, 1, 4, 4, ..., 64, 64 -> median (0.0025 + 1) / 2.
  CHECK(r.attr_double("/magnitude/blocks.0.attn.in", "median") == Approx(0.50125));
  // Flow: attn.in = 100%, attn.out = 25% (x^2 scaled by 0.25), absent kinds NaN; layer 1 has no attn.in.
  const auto taps = r.read_strings("/flow/taps");
  REQUIRE(taps.size() == 13);
  CHECK(taps[5] == "attn.out");
  const auto rel = r.read<double>("/flow/layer_0/median_rel");
  CHECK(rel[0] == Approx(100.0));
  CHECK(rel[5] == Approx(25.0));
  CHECK(std::isnan(rel[1]));
  CHECK_FALSE(r.has_group("/flow/layer_1"));

  // Eq. 2 at eps = 0.01: attn.in has 0 and 0.0025 below -> 2/4; 2 x attn.in has 0 and 0.01 (not below) -> 1/4.
  CHECK(r.read<double>("/sparsity/blocks.0.attn.in/value")[0] == Approx(0.5));
  CHECK(r.read<double>("/sparsity/by_layer/attn.out") == std::vector<double>{0.5, 0.25});
  CHECK(std::isnan(r.read<double>("/sparsity/by_layer/attn.in")[1]));
  CHECK(r.shape("/sparsity/blocks.0.attn.in/curve") == std::vector<std::uint64_t>{33});

  // Every token ranks the dims d0 > d3 > d2 > d1, so all K high dims are shared by any run.
  // Runs of k tokens: window 0 (6 tokens) has 7 - k, window 1 (2 tokens) one run of 2.
  const auto runs = r.read<std::int64_t>("/shared/blocks.0.attn.in/runs");
  REQUIRE(runs.size() == 19);
  CHECK(std::vector<std::int64_t>(runs.begin(), runs.begin() + 6) == std::vector<std::int64_t>{6, 4, 3, 2, 1, 0});
  CHECK(r.shape("/shared/blocks.0.attn.in/counts") == std::vector<std::uint64_t>{19, 100});
  const auto counts = r.read<double>("/shared/blocks.0.attn.in/counts");
  CHECK(counts[0 * 100 + 49] == Approx(2.0));  // k = 2, p = 50%: K = 2
  CHECK(std::isnan(counts[5 * 100 + 49]));     // k = 7: no run
  CHECK(r.read<std::int32_t>("/shared/k").front() == 2);

  // Fig. 5 with p = 20% -> K = 1: d0 is high in all 5 tokens, the rest nowhere; the example orders
  // d0, then the low dims by mean magnitude: d3, d2, d1.
  CHECK(r.read<std::int32_t>("/pattern5/blocks.0.attn.in/order") == std::vector<std::int32_t>{0, 3, 2, 1});
  CHECK(r.shape("/pattern5/blocks.0.attn.in/magnitude") == std::vector<std::uint64_t>{5, 4});
  CHECK(r.attr_double("/pattern5/blocks.0.attn.in", "all") == Approx(1.0));

  // Headline results with their definitions.
  const ObservedResult* flow = find(rep, "observe/flow_median/blocks.0.attn.out");
  REQUIRE(flow != nullptr);
  CHECK(flow->value == Approx(25.0));
  CHECK_THAT(flow->meta_json, Contains("\"definition\"") && Contains("\"tokens\":8") && Contains("\"dims\":4"));
  CHECK(find(rep, "observe/flow_median/blocks.1.attn.out") == nullptr);
  REQUIRE(find(rep, "observe/sparsity/blocks.1.attn.out") != nullptr);
  CHECK(find(rep, "observe/sparsity/blocks.1.attn.out")->value == Approx(0.25));
  REQUIRE(find(rep, "observe/shared_k2_top80/blocks.0.attn.in") != nullptr);
  CHECK(find(rep, "observe/shared_k2_top80/blocks.0.attn.in")->value == Approx(4.0));  // K = ceil(3.2)
  REQUIRE(find(rep, "observe/shared5_all/blocks.0.attn.in") != nullptr);
  CHECK(find(rep, "observe/shared5_all/blocks.0.attn.in")->value == Approx(1.0));
  CHECK(find(rep, "observe/share_top50/blocks.0.attn.in") != nullptr);
  CHECK(rep.taps[1].flow_median_pct == Approx(25.0));
  CHECK(std::isnan(rep.taps[2].flow_median_pct));
}

TEST_CASE("observe: bad captures are one-line errors and leave no observations file", "[observe]") {
  moxlab::testing::ScratchDir dir("observe_bad");
  const std::string out = dir.file("out.h5");
  CHECK_THROWS_WITH(observe_capture(dir.file("missing.h5"), out), Contains("no capture file at"));

  const std::string no_pos = dir.file("no_pos.h5");
  write_capture(no_pos, false);
  CHECK_THROWS_WITH(observe_capture(no_pos, out), Contains("no /position dataset"));

  const std::string empty = dir.file("empty.h5");
  write_capture(empty, true, 0);
  CHECK_THROWS_WITH(observe_capture(empty, out), Contains("blocks.0.attn.in has no rows"));

  const std::string short_tap = dir.file("short.h5");
  write_capture(short_tap, true, 7);
  CHECK_THROWS_WITH(observe_capture(short_tap, out), Contains("has 7 rows but /window has 8"));
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("observe: residual branch RMS per layer from resid.mid / resid.out (hand computed)", "[observe]") {
  moxlab::testing::ScratchDir dir("observe_branch");
  const std::string cap = dir.file("cap.h5"), out = dir.file("cap.observe.h5");
  // Two layers, 8 tokens x 4 dims. Layer 0: resid.mid = e (layer 0's attention branch is not observable),
  // FFN adds [1, -1, 1, -1] (RMS 1). Layer 1: attention adds 3 everywhere (RMS 3), the FFN adds
  // [0, 0, 0, 1] (RMS sqrt(1 / 4) = 0.5).
  std::vector<float> mid0, out0, mid1, out1;
  for (int t = 0; t < kTokens; ++t)
    for (int d = 0; d < kDims; ++d) {
      const float e = 0.1f * t - 0.2f * d;
      mid0.push_back(e);
      out0.push_back(e + (d % 2 == 0 ? 1.0f : -1.0f));
      mid1.push_back(out0.back() + 3.0f);
      out1.push_back(mid1.back() + (d == 3 ? 1.0f : 0.0f));
    }
  {
    TensorLogWriter w(cap);
    w.write("/probes/blocks.0.resid.mid", mid0.data(), {kTokens, kDims});
    w.write("/probes/blocks.0.resid.out", out0.data(), {kTokens, kDims});
    w.write("/probes/blocks.1.resid.mid", mid1.data(), {kTokens, kDims});
    w.write("/probes/blocks.1.resid.out", out1.data(), {kTokens, kDims});
    w.write("/window", std::vector<std::int32_t>(kTokens, 0));
    w.write("/position", std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
    w.finish();
  }
  const ObserveReport rep = observe_capture(cap, out);
  REQUIRE(rep.branches.size() == 2);
  CHECK(std::isnan(rep.branches[0].attn_rms));
  CHECK(rep.branches[0].ffn_rms == Approx(1.0).epsilon(1e-6));
  CHECK(rep.branches[1].attn_rms == Approx(3.0).epsilon(1e-6));
  CHECK(rep.branches[1].ffn_rms == Approx(0.5).epsilon(1e-6));
  CHECK(find(rep, "observe/branch_rms/blocks.0.attn") == nullptr);  // NaN: left out
  REQUIRE(find(rep, "observe/branch_rms/blocks.1.attn") != nullptr);
  CHECK(find(rep, "observe/branch_rms/blocks.1.attn")->value == Approx(3.0).epsilon(1e-6));
  TensorLogReader r(out);
  const auto ffn = r.read<double>("/branch/ffn_rms");
  REQUIRE(ffn.size() == 2);
  CHECK(ffn[1] == Approx(0.5).epsilon(1e-6));

  // Without residual taps there is nothing to report.
  const std::string plain = dir.file("plain.h5");
  write_capture(plain);
  CHECK(observe_capture(plain, dir.file("plain.observe.h5")).branches.empty());
}
