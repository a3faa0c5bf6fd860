#include "viewer/model/tomoe_view.h"

#include <algorithm>
#include <cstdio>

#include "core/common/error.h"
#include "core/observe/layout_check.h"
#include "core/observe/observe_capture.h"
#include "core/store/tensor_log_reader.h"
#include "viewer/model/capture_files.h"

namespace moxlab::viewer {

namespace {
std::string tap(int layer, const char* what) { return "/probes/blocks." + std::to_string(layer) + ".ffn.router." + what; }
}  // namespace

KeptWidths kept_width_fractions(const TomoeConversionRecord& r) {
  require(r.head_dim > 0 && r.d_mid > 0, "ToMoE conversion record without head_dim or d_mid");
  KeptWidths k;
  for (int l = 0; l < r.layers(); ++l) {
    k.qk.push_back(static_cast<double>(r.qk_width[l]) / r.head_dim);
    k.vo.push_back(static_cast<double>(r.vo_top_k[l]) / r.head_dim);
    k.mlp.push_back(static_cast<double>(r.mlp_width[l]) / r.d_mid);
  }
  return k;
}

std::vector<BoxStats> expert_width_boxes(const TomoeConversionRecord& r) {
  std::vector<BoxStats> boxes;
  for (const auto& widths : r.expert_widths) boxes.push_back(box_stats(std::vector<double>(widths.begin(), widths.end())));
  return boxes;
}

RoutedCapture read_routed_capture(const std::string& path) {
  const TensorLogReader r = TensorLogReader::open_checked(path);
  require(r.has_dataset("/domain") && r.has_dataset("/domain_names"), path + " is not a capture file (no /domain)");
  const CaptureLayout layout = check_capture_layout(r);
  RoutedCapture c;
  c.path = path;
  for (const auto& t : layout.taps) {
    const std::string ds = "/probes/" + t;
    const auto [layer, kind] = split_tap(t);
    if (kind != "ffn.router.topk" || !r.has_dataset(tap(layer, "probs"))) continue;
    const auto shape = r.shape(ds);
    require(shape.size() == 2 && r.shape(tap(layer, "probs")) == shape, path + ": " + ds + " and its .probs differ in shape");
    require(shape[1] <= 4096, path + ": " + ds + " has " + std::to_string(shape[1]) + " experts");
    require(c.experts == 0 || c.experts == static_cast<int>(shape[1]), path + ": FFN routers disagree in expert count");
    c.experts = static_cast<int>(shape[1]);
    c.layers.push_back(layer);
  }
  require(!c.layers.empty(), path + " has no ToMoE FFN router taps (blocks.<l>.ffn.router.topk and .probs)");
  std::sort(c.layers.begin(), c.layers.end());
  const auto names = r.read_strings("/domain_names");
  const auto domain = r.read<std::int32_t>("/domain");
  // The first contiguous block of each domain (capture_activations writes one domain's windows after another).
  for (std::size_t row = 0; row < domain.size();) {
    std::size_t end = row;
    while (end < domain.size() && domain[end] == domain[row]) ++end;
    const std::int32_t d = domain[row];
    require(d >= 0 && static_cast<std::size_t>(d) < names.size(), path + ": /domain " + std::to_string(d) + " has no name");
    if (std::find(c.domains.begin(), c.domains.end(), names[d]) == c.domains.end()) {
      c.domains.push_back(names[d]);
      c.begin.push_back(static_cast<std::int64_t>(row));
      c.count.push_back(static_cast<std::int64_t>(end - row));
    }
    row = end;
  }
  return c;
}

std::vector<RoutedToken> routed_tokens(const RoutedCapture& c, int layer, std::int64_t row, std::int64_t count) {
  require(std::find(c.layers.begin(), c.layers.end(), layer) != c.layers.end(),
          c.path + ": layer " + std::to_string(layer) + " has no FFN router tap");
  if (count <= 0) return {};
  const TensorLogReader r = TensorLogReader::open_checked(c.path);
  const std::vector<float> topk =
      r.read_rows<float>(tap(layer, "topk"), static_cast<std::uint64_t>(row), static_cast<std::uint64_t>(count));
  const std::vector<float> probs =
      r.read_rows<float>(tap(layer, "probs"), static_cast<std::uint64_t>(row), static_cast<std::uint64_t>(count));
  const auto texts = read_token_texts(c.path, row, count);
  const std::size_t n = static_cast<std::size_t>(c.experts);
  require(n > 0 && topk.size() == static_cast<std::size_t>(count) * n && probs.size() == topk.size(),
          c.path + ": layer " + std::to_string(layer) + " router taps are not [tokens, " + std::to_string(n) + "]");
  std::vector<RoutedToken> out(static_cast<std::size_t>(count));
  for (std::size_t t = 0; t < out.size(); ++t) {
    out[t].text = texts[t];
    const float* row_topk = topk.data() + t * n;
    const auto best = std::max_element(row_topk, row_topk + n);
    if (*best <= 0) continue;  // no expert routed (expert stays -1)
    out[t].expert = static_cast<int>(best - row_topk);
    out[t].prob = probs[t * n + out[t].expert];
  }
  return out;
}

std::vector<TextSpan> routed_spans(const std::vector<RoutedToken>& tokens) {
  std::vector<TextSpan> spans;
  for (const auto& t : tokens) {
    if (t.expert < 0) {
      spans.push_back({t.text, {}, 0.0f, "no expert"});
      continue;
    }
    char tip[64];
    std::snprintf(tip, sizeof tip, "expert %d, p=%.2f", t.expert, t.prob);
    spans.push_back({t.text, palette(t.expert), 0.9f, tip});
  }
  return spans;
}

std::vector<TextSpan> expert_legend(const std::vector<RoutedToken>& tokens, int experts) {
  std::vector<int> load(static_cast<std::size_t>(std::max(0, experts)), 0);
  for (const auto& t : tokens)
    if (t.expert >= 0 && t.expert < experts) ++load[t.expert];
  std::vector<TextSpan> spans;
  for (int e = 0; e < experts; ++e) {
    char text[48], tip[96];
    const double share = tokens.empty() ? 0.0 : 100.0 * load[e] / tokens.size();
    std::snprintf(text, sizeof text, "expert %d: %.0f%%", e, share);
    std::snprintf(tip, sizeof tip, "%d of the %zu shown tokens routed to expert %d", load[e], tokens.size(), e);
    spans.push_back({text, palette(e), 0.9f, tip});
  }
  return spans;
}

}  // namespace moxlab::viewer
