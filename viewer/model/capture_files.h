// The observation and routing files of a run, read for the viewer through the same TensorLogReader the
// CLI uses (layouts: core/observe/observe_capture.h and core/observe/router_domains.h). Files are
// small (per-tap curves of length d, a few [19, 100] tables), so each is read whole once and cached by
// the caller. A missing, truncated, corrupted or foreign file is a moxlab::Error naming it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/observe/router_domains.h"

namespace moxlab::viewer {

struct TapCurves {
  std::string tap;                                  // blocks.3.attn.in
  std::vector<double> pooled_cumshare, token_cumshare;  // [d]
  std::vector<double> shared_counts, shared_chance;     // [K, P] (k-major), empty when absent
  std::vector<float> pattern_magnitude;                 // [5, d], empty when absent
  std::vector<std::int32_t> pattern_order, pattern_bits;  // [d]
  std::int64_t example_row = -1;                           // capture row of the 5-token example
  std::int64_t dims = 0;
};

struct ObservationFile {
  std::string path;
  std::string source;                          // the capture it was computed from
  std::vector<std::string> taps;               // sorted by layer, then forward order
  std::vector<TapCurves> curves;               // parallel to taps
  std::vector<std::string> sparsity_kinds;     // attn.in, attn.out, ffn.in, ffn.out
  std::vector<std::vector<double>> sparsity_by_layer;  // [kind][layer]
  std::vector<std::string> flow_taps;          // forward order
  std::vector<std::vector<double>> flow_median_rel;    // [layer][tap], percent of attn.in
  std::vector<std::int32_t> shared_k;          // 2..max_run
  std::vector<double> shared_p;                // 1..100
};

// One router's per-domain table (router, domains, tokens, sub_dims, selected, score and the spread /
// least_used summaries of core/observe/router_domains.h) and where it sits.
struct RouterTable : RouterDomainStats {
  int layer = -1;
  std::string part;  // attn | ffn
};

struct RoutingFile {
  std::string path;
  std::string source;  // the capture it was computed from ("" when not recorded)
  std::vector<std::string> domains;
  std::vector<RouterTable> routers;  // layer order, attn before ffn
};

// Each reader opens its file with TensorLogReader::open_checked (read in a child process first, so a
// file that crashes libhdf5 is an Error here, not the end of the viewer), checks its layout
// (core/observe/layout_check.h), reads it and checks the values the panels draw.
ObservationFile read_observation_file(const std::string& path);
// The text of capture rows [row, row + count) (one token each), from /text/bytes and /text/offsets.
std::vector<std::string> read_token_texts(const std::string& capture_path, std::int64_t row, std::int64_t count);
RoutingFile read_routing_file(const std::string& path);

}  // namespace moxlab::viewer
