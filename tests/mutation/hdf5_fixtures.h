// moxlab's HDF5 files for the readers' mutation tests, written by the library's own writers without
// LibTorch: a capture streamed window by window in the layout of core/capture/capture.h (as
// capture_activations writes it: appended rows, /text, root attributes), a routing capture of MoHD
// attention routers (top-2 of 4 sub-dims) and ToMoE FFN routers (one-hot over 4 experts), the
// observations file `observe` makes of the capture, the routing file `route` makes of the routing
// capture and a ToMoE conversion file. Values come from SplitMix64, so every run writes the same bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/splitmix64.h"
#include "core/observe/layout_check.h"
#include "core/observe/observe_capture.h"
#include "core/observe/router_domains.h"
#include "core/observe/tomoe_conversion_file.h"
#include "core/store/tensor_log_writer.h"

namespace moxlab::testing {

struct Hdf5Fixtures {
  std::string capture, routing_capture, observations, routing, tomoe;
};

namespace fixture_detail {

constexpr int kDomains = 3, kWindowsPerDomain = 2, kWindow = 64, kDims = 16, kRouted = 4;

inline float uniform(SplitMix64& rng) { return static_cast<float>(rng.below(1u << 24)) / static_cast<float>(1u << 24); }

// Streams a capture; taps(tap_values) fills each tap's rows of one window.
template <class Taps>
void write_capture(const std::string& path, std::int64_t run_id, Taps taps) {
  SplitMix64 rng(29);
  TensorLogWriter w(path);
  w.set_attr_int("/", "run_id", run_id);
  w.set_attr("/", "config", R"({"model.attention":"mohd","model.ffn":"tomoe","model.dim":16,"model.n_layers":2})");
  w.set_attr("/", "tokenizer", "bpe:/data/cache/bpe-0123456789abcdef.json");
  w.write_strings("/domain_names", {"code", "books", "wiki", "legal"});  // legal: no tokens, as a real capture
  std::int64_t text_pos = 0;
  int window = 0;
  for (int d = 0; d < kDomains; ++d)
    for (int k = 0; k < kWindowsPerDomain; ++k, ++window) {
      taps(w, rng);
      std::vector<std::int32_t> ids(kWindow), dom(kWindow, d), widx(kWindow, window), pos(kWindow);
      std::vector<std::int64_t> offsets;
      std::string text;
      for (int i = 0; i < kWindow; ++i) {
        ids[i] = static_cast<std::int32_t>(rng.below(512));
        pos[i] = i;
        offsets.push_back(text_pos + static_cast<std::int64_t>(text.size()));
        text += " tok" + std::to_string(ids[i]);
        offsets.push_back(text_pos + static_cast<std::int64_t>(text.size()));
      }
      text_pos += static_cast<std::int64_t>(text.size());
      w.append("/tokens", ids);
      w.append("/domain", dom);
      w.append("/window", widx);
      w.append("/position", pos);
      w.append_rows("/text/offsets", offsets.data(), kWindow, 2);
      w.append("/text/bytes", reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    }
  w.set_attr("/", "taps", "fixture");
  w.set_attr_int("/", "seq_len", kWindow);
  w.set_attr_int("/", "layout_version", kTensorLogLayoutVersion);
  w.finish();
}

}  // namespace fixture_detail

// Writes the five files into dir.
inline Hdf5Fixtures write_hdf5_fixtures(const std::string& dir) {
  using namespace fixture_detail;
  Hdf5Fixtures f{dir + "/capture.h5", dir + "/capture-routing.h5", dir + "/capture.observe.h5",
                 dir + "/capture-routing.routing.h5", dir + "/tomoe-conversion.h5"};
  write_capture(f.capture, 1, [](TensorLogWriter& w, SplitMix64& rng) {
    for (const char* tap : {"blocks.0.attn.in", "blocks.0.attn.out", "blocks.0.ffn.in", "blocks.0.ffn.out",
                            "blocks.1.attn.in", "blocks.1.attn.out"}) {
      std::vector<float> rows(kWindow * kDims);
      // A few heavy dimensions, as in real activations, so the observations are not flat.
      for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = (uniform(rng) - 0.5f) * (i % kDims < 3 ? 8.0f : 1.0f);
      w.append_rows(std::string("/probes/") + tap, rows.data(), kWindow, kDims);
    }
  });
  write_capture(f.routing_capture, 2, [](TensorLogWriter& w, SplitMix64& rng) {
    for (int layer = 0; layer < 2; ++layer)
      for (const char* part : {"attn", "ffn"}) {
        std::vector<float> probs(kWindow * kRouted), topk(kWindow * kRouted, 0.0f);
        for (int t = 0; t < kWindow; ++t) {
          float sum = 0;
          for (int i = 0; i < kRouted; ++i) sum += probs[t * kRouted + i] = 0.05f + uniform(rng);
          for (int i = 0; i < kRouted; ++i) probs[t * kRouted + i] /= sum;
          const int first = static_cast<int>(rng.below(kRouted));
          topk[t * kRouted + first] = 1;  // ToMoE FFN: one expert; MoHD attention: a second sub-dim
          if (std::string(part) == "attn") topk[t * kRouted + (first + 1) % kRouted] = 1;
        }
        const std::string base = "/probes/blocks." + std::to_string(layer) + "." + part + ".router.";
        w.append_rows(base + "probs", probs.data(), kWindow, kRouted);
        w.append_rows(base + "topk", topk.data(), kWindow, kRouted);
      }
  });
  observe_capture(f.capture, f.observations);
  observe_routing(f.routing_capture, f.routing);

  TomoeConversionRecord r;
  r.run_id = 2;
  r.target_active = 0.5;
  r.active_ratio = 0.55;
  r.conversion_rule = "code";
  r.head_dim = 8;
  r.d_mid = 48;
  r.experts = kRouted;
  r.qk_width = {8, 6};
  r.vo_top_k = {6, 4};
  r.mlp_width = {40, 30};
  r.mlp_min_width = {20, 12};
  r.mlp_union = {1.0, 0.8};
  r.vo_union = {1.0, 0.6};
  r.expert_similarity = {0.5, 0.3};
  r.expert_widths = {{40, 30, 25, 20}, {30, 20, 16, 12}};
  r.expert_jaccard = {std::vector<double>(kRouted * kRouted, 0.5), std::vector<double>(kRouted * kRouted, 0.3)};
  write_tomoe_conversion(f.tomoe, r);
  return f;
}

}  // namespace moxlab::testing
