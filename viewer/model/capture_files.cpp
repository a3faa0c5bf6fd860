#include "viewer/model/capture_files.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "core/observe/layout_check.h"
#include "core/observe/observe_capture.h"
#include "core/store/tensor_log_reader.h"

namespace moxlab::viewer {

namespace {

// Taps with a magnitude group, in layer order then forward order.
std::vector<std::string> observed_taps(const TensorLogReader& r) {
  std::vector<std::string> taps;
  for (const auto& ds : r.datasets("/magnitude")) {
    if (ds.size() < 16 || ds.compare(ds.size() - 16, 16, "/pooled_cumshare") != 0) continue;
    taps.push_back(ds.substr(std::string("/magnitude/").size(), ds.size() - 16 - std::string("/magnitude/").size()));
  }
  const auto& kinds = flow_tap_kinds();
  auto rank = [&](const std::string& tap) {
    const auto [layer, kind] = split_tap(tap);
    return std::make_pair(layer, std::find(kinds.begin(), kinds.end(), kind) - kinds.begin());
  };
  std::stable_sort(taps.begin(), taps.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return taps;
}

// Values the plots draw on linear axes must be ones observe or route can write (NaN marks an absent
// tap; the plots skip non-finite values): a corrupted number like 1e308 would make the axes meaningless.
template <class T>
void require_values(const std::vector<T>& v, double lo, double hi, const std::string& what, bool infinite_ok = false) {
  require(std::all_of(v.begin(), v.end(),
                      [&](T x) {
                        const double d = static_cast<double>(x);
                        return std::isnan(d) || (infinite_ok && std::isinf(d)) || (d >= lo && d <= hi);
                      }),
          what + " holds a value outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (corrupt file?)");
}

constexpr double kHuge = 1e15;

}  // namespace

ObservationFile read_observation_file(const std::string& path) {
  const TensorLogReader r = TensorLogReader::open_checked(path);
  check_observations_layout(r);
  ObservationFile f;
  f.path = path;
  if (r.has_attr("/", "source")) f.source = r.attr("/", "source");
  f.taps = observed_taps(r);
  const std::string in = path + ": ";
  for (const auto& tap : f.taps) {
    TapCurves c;
    c.tap = tap;
    c.pooled_cumshare = r.read<double>("/magnitude/" + tap + "/pooled_cumshare");
    c.token_cumshare = r.read<double>("/magnitude/" + tap + "/token_cumshare");
    require_values(c.pooled_cumshare, 0, 1.01, in + "/magnitude/" + tap + "/pooled_cumshare");
    require_values(c.token_cumshare, 0, 1.01, in + "/magnitude/" + tap + "/token_cumshare");
    c.dims = static_cast<std::int64_t>(c.pooled_cumshare.size());
    if (r.has_dataset("/shared/" + tap + "/counts")) {
      c.shared_counts = r.read<double>("/shared/" + tap + "/counts");
      c.shared_chance = r.read<double>("/shared/" + tap + "/chance");
      require_values(c.shared_counts, 0, kHuge, in + "/shared/" + tap + "/counts");
      require_values(c.shared_chance, 0, kHuge, in + "/shared/" + tap + "/chance");
    }
    const std::string g = "/pattern5/" + tap;
    if (r.has_dataset(g + "/magnitude")) {
      c.pattern_magnitude = r.read<float>(g + "/magnitude");
      c.pattern_order = r.read<std::int32_t>(g + "/order");
      c.pattern_bits = r.read<std::int32_t>(g + "/pattern");
      if (r.has_attr(g, "example_row")) c.example_row = r.attr_int(g, "example_row");
      const auto d = static_cast<std::size_t>(c.dims);
      bool ok = true;
      for (auto j : c.pattern_order) ok = ok && j >= 0 && static_cast<std::size_t>(j) < d;
      for (auto b : c.pattern_bits) ok = ok && b >= 0 && b < 32;  // 5 bits: one per token of the run
      for (float m : c.pattern_magnitude) ok = ok && std::isfinite(m) && m >= 0;
      require(ok, path + ": " + g + " does not match the tap's " + std::to_string(d) + " dimensions");
    }
    f.curves.push_back(std::move(c));
  }
  for (const std::string kind : {"attn.in", "attn.out", "ffn.in", "ffn.out"}) {
    if (!r.has_dataset("/sparsity/by_layer/" + kind)) continue;
    f.sparsity_kinds.push_back(kind);
    f.sparsity_by_layer.push_back(r.read<double>("/sparsity/by_layer/" + kind));
    require_values(f.sparsity_by_layer.back(), 0, 1, in + "/sparsity/by_layer/" + kind);
  }
  if (r.has_dataset("/flow/taps")) {
    f.flow_taps = r.read_strings("/flow/taps");
    for (int l = 0; r.has_dataset("/flow/layer_" + std::to_string(l) + "/median_rel"); ++l) {
      f.flow_median_rel.push_back(r.read<double>("/flow/layer_" + std::to_string(l) + "/median_rel"));
      // Infinite when the layer's attn.in median is 0.
      require_values(f.flow_median_rel.back(), -kHuge, kHuge, in + "/flow/layer_" + std::to_string(l) + "/median_rel",
                     /*infinite_ok=*/true);
    }
  }
  if (r.has_dataset("/shared/k")) {
    f.shared_k = r.read<std::int32_t>("/shared/k");
    f.shared_p = r.read<double>("/shared/p");
    require_values(f.shared_p, 0, 100, in + "/shared/p");
  }
  return f;
}

std::vector<std::string> read_token_texts(const std::string& capture_path, std::int64_t row, std::int64_t count) {
  const TensorLogReader r = TensorLogReader::open_checked(capture_path, {"/text/offsets", "/text/bytes"});
  const CaptureLayout layout = check_capture_layout(r);
  require(layout.text, capture_path + " has no /text (token texts)");
  require(row >= 0 && count > 0 && static_cast<std::uint64_t>(row) <= layout.rows &&
              static_cast<std::uint64_t>(count) <= layout.rows - static_cast<std::uint64_t>(row),
          capture_path + ": rows [" + std::to_string(row) + ", " + std::to_string(row + count) + ") are not in its " +
              std::to_string(layout.rows) + " rows");
  const auto offsets = r.read_rows<std::int64_t>("/text/offsets", static_cast<std::uint64_t>(row),
                                                 static_cast<std::uint64_t>(count));
  const std::int64_t begin = offsets.front(), end = offsets.back();
  const std::string bad = capture_path + ": bad /text/offsets at row " + std::to_string(row);
  require(begin >= 0 && end >= begin, bad);
  // Every token's [a, b) inside [begin, end): the texts are cut from the bytes read below.
  for (std::int64_t i = 0; i < count; ++i)
    require(offsets[2 * i] >= begin && offsets[2 * i] <= offsets[2 * i + 1] && offsets[2 * i + 1] <= end, bad);
  const auto bytes = r.read_rows<std::uint8_t>("/text/bytes", static_cast<std::uint64_t>(begin),
                                               static_cast<std::uint64_t>(end - begin));
  std::vector<std::string> texts;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t a = offsets[2 * i] - begin, b = offsets[2 * i + 1] - begin;
    texts.emplace_back(bytes.begin() + a, bytes.begin() + b);
  }
  return texts;
}

RoutingFile read_routing_file(const std::string& path) {
  const TensorLogReader r = TensorLogReader::open_checked(path);
  check_routing_layout(r);
  RoutingFile f;
  f.path = path;
  if (r.has_attr("/", "source")) f.source = r.attr("/", "source");
  f.domains = r.read_strings("/domain_names");
  const std::size_t d = f.domains.size();
  for (const auto& ds : r.datasets("/routing")) {
    const std::string suffix = "/selected";
    if (ds.size() < suffix.size() || ds.compare(ds.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string g = ds.substr(0, ds.size() - suffix.size());
    RouterTable t;
    t.router = g.substr(std::string("/routing/").size());
    const auto [layer, part] = split_tap(t.router);
    t.layer = layer;
    t.part = part;
    t.selected = r.read<double>(g + "/selected");
    t.score = r.read<double>(g + "/score");
    t.tokens = r.read<std::int64_t>(g + "/tokens");
    require(d > 0 && !t.selected.empty() && t.selected.size() % d == 0 && t.score.size() == t.selected.size() &&
                t.tokens.size() == d,
            path + ": " + g + " does not match /domain_names");
    require_values(t.selected, 0, 1, path + ": " + g + "/selected");
    require_values(t.score, -kHuge, kHuge, path + ": " + g + "/score");
    require_values(t.tokens, 0, kHuge, path + ": " + g + "/tokens");
    t.sub_dims = static_cast<int>(t.selected.size() / d);
    t.domains = f.domains;
    if (r.has_attr(g + "/selected", "spread_p")) {  // routing files written since the permutation null
      t.null.p = r.attr_double(g + "/selected", "spread_p");
      t.null.q95 = r.attr_double(g + "/selected", "spread_null_q95");
      t.null.permutations = static_cast<int>(r.attr_int(g + "/selected", "spread_permutations"));
      require(t.null.p > 0 && t.null.p <= 1 && t.null.q95 >= 0 && t.null.q95 <= 1 && t.null.permutations >= 1,
              path + ": " + g + "/selected has a spread null out of range");
    }
    f.routers.push_back(std::move(t));
  }
  std::stable_sort(f.routers.begin(), f.routers.end(), [](const RouterTable& a, const RouterTable& b) {
    return std::make_pair(a.layer, a.part) < std::make_pair(b.layer, b.part);
  });
  require(!f.routers.empty(), path + " holds no routers");
  return f;
}

}  // namespace moxlab::viewer
