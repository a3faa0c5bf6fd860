// The observation and routing files of a run, read for the viewer through the same TensorLogReader the
// CLI uses (layouts: core/observe/observe_capture.h and core/observe/router_domains.h). Files are
// small (per-tap curves of length d, a few [19, 100] tables), so each is read whole once and cached by
// the caller. A missing, truncated or foreign file is a moxlab::Error naming it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moxlab::viewer {

struct TapCurves {
  std::string tap;                                  // blocks.3.attn.in
  std::vector<double> pooled_cumshare, token_cumshare;  // [d]
  std::vector<double> shared_counts, shared_chance;     // [K, P] (k-major), empty when absent
  std::vector<float> pattern_magnitude;                 // [5, d], empty when absent
  std::vector<std::int32_t> pattern_order, pattern_bits;  // [d]
  std::int64_t dims = 0;
};

struct ObservationFile {
  std::string path;
  std::vector<std::string> taps;               // sorted by layer, then forward order
  std::vector<TapCurves> curves;               // parallel to taps
  std::vector<std::string> sparsity_kinds;     // attn.in, attn.out, ffn.in, ffn.out
  std::vector<std::vector<double>> sparsity_by_layer;  // [kind][layer]
  std::vector<std::string> flow_taps;          // forward order
  std::vector<std::vector<double>> flow_median_rel;    // [layer][tap], percent of attn.in
  std::vector<std::int32_t> shared_k;          // 2..max_run
  std::vector<double> shared_p;                // 1..100
};

struct RouterTable {
  std::string router;                // blocks.1.attn
  int layer = -1;
  std::string part;                  // attn | ffn
  int sub_dims = 0;
  std::vector<std::int64_t> tokens;  // [D]
  std::vector<double> selected, score;  // [D, N]
};

struct RoutingFile {
  std::string path;
  std::vector<std::string> domains;
  std::vector<RouterTable> routers;  // layer order, attn before ffn
};

ObservationFile read_observation_file(const std::string& path);
RoutingFile read_routing_file(const std::string& path);

}  // namespace moxlab::viewer
