// What a ToMoE conversion decided (section 3.5), as a small HDF5 file beside the run
// (<run dir>/tomoe-conversion.h5) for the analyses of Fig. 4/7 (kept width per layer and operation),
// Fig. 5a (union coverage), Fig. 8 (expert widths) and Fig. 9 (expert similarity). Torch-free, so the
// viewer reads it with the writer's own layout:
//   attrs on "/": layout_version, run_id, target_active (p), active_ratio (measured), conversion_rule,
//                 head_dim, d_mid, experts
//   /qk_width, /vo_top_k, /mlp_width, /mlp_min_width   int32 [L]
//   /mlp_union, /vo_union, /expert_similarity          float64 [L]
//   /expert_widths                                     int32 [L, N]
//   /expert_jaccard                                    float64 [L, N, N]
// Layers without a ToMoE module hold full widths, unions of 1 and a Jaccard of 1.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moxlab {

struct TomoeConversionRecord {
  std::int64_t run_id = -1;
  double target_active = 0, active_ratio = 0;
  std::string conversion_rule;
  int head_dim = 0, d_mid = 0, experts = 0;
  std::vector<int> qk_width, vo_top_k, mlp_width, mlp_min_width;      // [L]
  std::vector<double> mlp_union, vo_union, expert_similarity;          // [L]
  std::vector<std::vector<int>> expert_widths;                         // [L][N]
  std::vector<std::vector<double>> expert_jaccard;                     // [L][N * N], row-major

  int layers() const { return static_cast<int>(qk_width.size()); }
};

// Atomic (temporary file, then rename). Inconsistent sizes are an Error naming the field.
void write_tomoe_conversion(const std::string& path, const TomoeConversionRecord& r);
// A missing, truncated, corrupted or foreign file is an Error naming it. The file is opened with
// TensorLogReader::open_checked (read in a child process first) and its layout checked before any value
// is read.
TomoeConversionRecord read_tomoe_conversion(const std::string& path);

}  // namespace moxlab
