// What the ToMoE panel shows, computed without ImGui (unit-tested in tests/viewer/test_tomoe_view.cpp):
// the per-layer series of a conversion file (core/observe/tomoe_conversion_file.h) and the routed expert
// of each captured token (the routing capture of `moxlab route`, layout core/capture/capture.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/observe/tomoe_conversion_file.h"
#include "viewer/model/box_stats.h"
#include "viewer/model/text_span.h"

namespace moxlab::viewer {

// Kept share of each operation per layer (ToMoE Fig. 4/7): q/k = kept RoPE-paired head dims / head_dim,
// v/o = top-K / head_dim, MLP = the widest expert's channels / d_mid (the width T(d_MoE) counts).
struct KeptWidths {
  std::vector<double> qk, vo, mlp;  // [L], in [0, 1]
};
KeptWidths kept_width_fractions(const TomoeConversionRecord& r);

// Five-number summary of the N experts' kept channels in each layer (Fig. 8), in channels.
std::vector<BoxStats> expert_width_boxes(const TomoeConversionRecord& r);

// The router side of a routing capture: which rows belong to which domain and which layers have an FFN
// expert router tap (blocks.<l>.ffn.router.topk, one-hot [tokens, N]).
struct RoutedCapture {
  std::string path;
  std::vector<std::string> domains;  // domains with captured rows, in capture order
  std::vector<std::int64_t> begin, count;  // rows [begin, begin + count) of each domain (captures write a domain's windows contiguously)
  std::vector<int> layers;           // layers with an FFN router tap, ascending
  int experts = 0;
};
// A missing, corrupted or foreign file, or one without FFN router taps, is an Error naming the file. The
// file is opened with TensorLogReader::open_checked (read in a child process first).
RoutedCapture read_routed_capture(const std::string& path);

struct RoutedToken {
  std::string text;
  int expert = -1;  // argmax of the token's topk row; -1 when the row is all zero
  double prob = 0;  // the router's probability of that expert (the .router.probs tap)
};
// Capture rows [row, row + count) at `layer` (one of c.layers), with their text.
std::vector<RoutedToken> routed_tokens(const RoutedCapture& c, int layer, std::int64_t row, std::int64_t count);

// ToMoE Tables 4/8/9: each token on its expert's palette colour, tooltip "expert e, p=0.71".
std::vector<TextSpan> routed_spans(const std::vector<RoutedToken>& tokens);
// The colour key: one chip per expert, "expert e: 34%" (its share of the given tokens).
std::vector<TextSpan> expert_legend(const std::vector<RoutedToken>& tokens, int experts);

}  // namespace moxlab::viewer
