// viewer/model/box_stats and tomoe_view: hand-computed box statistics (type-7 quartiles), the per-layer
// ToMoE series, and the routed expert of each token decoded from a small synthetic routing capture
// (the layout of core/capture/capture.h, written with TensorLogWriter).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/store/tensor_log_writer.h"
#include "tests/scratch_dir.h"
#include "viewer/model/box_stats.h"
#include "viewer/model/tomoe_view.h"

using namespace moxlab;
using namespace moxlab::viewer;
using Catch::Matchers::Contains;

namespace {
void check_box(const BoxStats& b, double min, double q1, double median, double q3, double max) {
  CHECK(b.min == Approx(min));
  CHECK(b.q1 == Approx(q1));
  CHECK(b.median == Approx(median));
  CHECK(b.q3 == Approx(q3));
  CHECK(b.max == Approx(max));
}
}  // namespace

TEST_CASE("box statistics: type-7 quartiles by hand", "[viewer][tomoe]") {
  // Sorted 10 20 30 40, n - 1 = 3: q1 at h = 0.75 -> 10 + 0.75 * 10; median at 1.5; q3 at 2.25.
  check_box(box_stats({40, 10, 30, 20}), 10, 17.5, 25, 32.5, 40);
  // n = 5: the quartiles fall on order statistics (h = 1, 2, 3); the outlier only moves the max.
  check_box(box_stats({100, 1, 3, 2, 4}), 1, 2, 3, 4, 100);
  // n = 3: h = 0.5 and 1.5 interpolate halfway.
  check_box(box_stats({0, 40, 10}), 0, 5, 10, 25, 40);
  check_box(box_stats({7}), 7, 7, 7, 7, 7);
  check_box(box_stats({NAN, 2, 4}), 2, 2.5, 3, 3.5, 4);  // NaN ignored
  CHECK(std::isnan(box_stats({}).median));
}

TEST_CASE("ToMoE per-layer series: kept fractions and expert width boxes", "[viewer][tomoe]") {
  TomoeConversionRecord r;
  r.head_dim = 8;
  r.d_mid = 48;
  r.experts = 4;
  r.qk_width = {8, 4};
  r.vo_top_k = {6, 2};
  r.mlp_width = {40, 48};
  r.expert_widths = {{40, 10, 30, 20}, {48, 48, 48, 48}};
  const KeptWidths k = kept_width_fractions(r);
  CHECK(k.qk == std::vector<double>{1.0, 0.5});
  CHECK(k.vo == std::vector<double>{0.75, 0.25});
  CHECK(k.mlp[0] == Approx(40.0 / 48));
  CHECK(k.mlp[1] == 1.0);
  const auto boxes = expert_width_boxes(r);
  REQUIRE(boxes.size() == 2);
  check_box(boxes[0], 10, 17.5, 25, 32.5, 40);
  check_box(boxes[1], 48, 48, 48, 48, 48);  // a dense-FFN layer: every expert full width
  r.d_mid = 0;
  CHECK_THROWS_WITH(kept_width_fractions(r), Contains("d_mid"));
}

TEST_CASE("routed expert per token from a routing capture: argmax of topk, its probability, the text", "[viewer][tomoe]") {
  moxlab::testing::ScratchDir dir("tomoe_view");
  const std::string path = dir.file("capture-routing-3.h5");
  {
    // 5 tokens: 3 of domain "a" then 2 of "b" ("c" has none); 3 experts at layer 1 (layer 0 is dense).
    TensorLogWriter w(path);
    w.write_strings("/domain_names", {"a", "b", "c"});
    w.write("/domain", std::vector<std::int32_t>{0, 0, 0, 1, 1});
    const std::vector<float> topk = {0, 1, 0,  1, 0, 0,  0, 0, 1,  0, 0, 0,  0, 1, 0};
    const std::vector<float> probs = {0.2f, 0.5f, 0.3f,  0.6f, 0.3f, 0.1f,  0.1f, 0.2f, 0.7f,  0.4f, 0.3f, 0.3f,
                                      0.1f, 0.8f, 0.1f};
    w.write("/probes/blocks.1.ffn.router.topk", topk.data(), {5, 3});
    w.write("/probes/blocks.1.ffn.router.probs", probs.data(), {5, 3});
    w.write("/probes/blocks.0.attn.out", std::vector<float>(10, 1.0f).data(), {5, 2});
    const std::string text = "Once upon a time";
    w.write("/text/bytes", std::vector<std::uint8_t>(text.begin(), text.end()));
    const std::vector<std::int64_t> offsets = {0, 4, 4, 9, 9, 11, 11, 16, 16, 16};
    w.write("/text/offsets", offsets.data(), {5, 2});
    w.finish();
  }
  const RoutedCapture c = read_routed_capture(path);
  CHECK(c.layers == std::vector<int>{1});
  CHECK(c.experts == 3);
  CHECK(c.domains == std::vector<std::string>{"a", "b"});
  CHECK(c.begin == std::vector<std::int64_t>{0, 3});
  CHECK(c.count == std::vector<std::int64_t>{3, 2});

  const auto a = routed_tokens(c, 1, 0, 3);
  REQUIRE(a.size() == 3);
  CHECK(a[0].text == "Once");
  CHECK(a[1].text == " upon");
  CHECK(a[2].text == " a");
  CHECK(a[0].expert == 1);
  CHECK(a[1].expert == 0);
  CHECK(a[2].expert == 2);
  CHECK(a[2].prob == Approx(0.7));
  const auto b = routed_tokens(c, 1, 3, 2);
  CHECK(b[0].expert == -1);  // an all-zero topk row: no expert
  CHECK(b[1].expert == 1);
  CHECK(b[1].prob == Approx(0.8));
  CHECK(b[1].text == "");

  const auto spans = routed_spans(a);
  REQUIRE(spans.size() == 3);
  CHECK(spans[2].tooltip == "expert 2, p=0.70");
  CHECK(spans[2].background.r == palette(2).r);
  CHECK(spans[2].background.g == palette(2).g);
  CHECK(routed_spans(b)[0].alpha == 0.0f);
  const auto legend = expert_legend(a, 3);
  REQUIRE(legend.size() == 3);
  CHECK(legend[0].text == "expert 0: 33%");
  CHECK(legend[1].background.b == palette(1).b);

  CHECK_THROWS_WITH(routed_tokens(c, 0, 0, 1), Contains("layer 0 has no FFN router tap"));
  CHECK(routed_tokens(c, 1, 0, 0).empty());
}

TEST_CASE("routing capture: no router taps or not a capture is a one-line Error naming the file", "[viewer][tomoe]") {
  moxlab::testing::ScratchDir dir("tomoe_view_bad");
  const std::string plain = dir.file("plain.h5"), foreign = dir.file("foreign.h5");
  {
    TensorLogWriter w(plain);
    w.write_strings("/domain_names", {"a"});
    w.write("/domain", std::vector<std::int32_t>{0});
    w.write("/probes/blocks.0.attn.out", std::vector<float>{1, 2}.data(), {1, 2});
    w.finish();
  }
  {
    TensorLogWriter w(foreign);
    w.write("/x", std::vector<double>{1.0});
    w.finish();
  }
  CHECK_THROWS_WITH(read_routed_capture(plain), Contains("plain.h5 has no ToMoE FFN router taps"));
  CHECK_THROWS_WITH(read_routed_capture(foreign), Contains("foreign.h5 is not a capture file"));
  CHECK_THROWS_WITH(read_routed_capture(dir.file("missing.h5")), Contains("missing.h5"));
}
