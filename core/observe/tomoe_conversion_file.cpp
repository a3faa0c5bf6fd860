#include "core/observe/tomoe_conversion_file.h"

#include <algorithm>
#include <cmath>

#include "core/common/error.h"
#include "core/observe/layout_check.h"
#include "core/store/tensor_log_reader.h"
#include "core/store/tensor_log_writer.h"

namespace moxlab {

namespace {

template <class T>
std::vector<T> flatten(const std::vector<std::vector<T>>& rows, std::size_t width, const std::string& what) {
  std::vector<T> out;
  for (const auto& r : rows) {
    require(r.size() == width, "ToMoE conversion file: every layer's " + what + " must have the same size");
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

template <class T>
std::vector<std::vector<T>> rows_of(const std::vector<T>& flat, std::size_t width) {
  std::vector<std::vector<T>> out;
  for (std::size_t i = 0; width > 0 && i + width <= flat.size(); i += width) out.emplace_back(flat.begin() + i, flat.begin() + i + width);
  return out;
}
}  // namespace

void write_tomoe_conversion(const std::string& path, const TomoeConversionRecord& r) {
  const std::size_t L = r.qk_width.size();
  require(L > 0, "ToMoE conversion file: no layers");
  for (const std::size_t n : {r.vo_top_k.size(), r.mlp_width.size(), r.mlp_min_width.size(), r.mlp_union.size(),
                              r.vo_union.size(), r.expert_similarity.size(), r.expert_widths.size(), r.expert_jaccard.size()})
    require(n == L, "ToMoE conversion file: every per-layer field needs " + std::to_string(L) + " layers");
  const std::size_t N = static_cast<std::size_t>(r.experts);
  require(N > 0, "ToMoE conversion file: experts must be positive");
  TensorLogWriter w(path);
  w.set_attr_int("/", "layout_version", kTensorLogLayoutVersion);
  w.set_attr_int("/", "run_id", r.run_id);
  w.set_attr_double("/", "target_active", r.target_active);
  w.set_attr_double("/", "active_ratio", r.active_ratio);
  w.set_attr("/", "conversion_rule", r.conversion_rule);
  w.set_attr_int("/", "head_dim", r.head_dim);
  w.set_attr_int("/", "d_mid", r.d_mid);
  w.set_attr_int("/", "experts", r.experts);
  w.write("/qk_width", r.qk_width);
  w.write("/vo_top_k", r.vo_top_k);
  w.write("/mlp_width", r.mlp_width);
  w.write("/mlp_min_width", r.mlp_min_width);
  w.write("/mlp_union", r.mlp_union);
  w.write("/vo_union", r.vo_union);
  w.write("/expert_similarity", r.expert_similarity);
  const auto widths = flatten(r.expert_widths, N, "expert widths");
  w.write("/expert_widths", widths.data(), {L, N});
  const auto jaccard = flatten(r.expert_jaccard, N * N, "expert Jaccard matrix");
  w.write("/expert_jaccard", jaccard.data(), {L, N, N});
  w.finish();
}

TomoeConversionRecord read_tomoe_conversion(const std::string& path) {
  const TensorLogReader in = TensorLogReader::open_checked(path);
  check_tomoe_conversion_layout(in);
  TomoeConversionRecord r;
  r.run_id = in.attr_int("/", "run_id");
  r.target_active = in.attr_double("/", "target_active");
  r.active_ratio = in.attr_double("/", "active_ratio");
  r.conversion_rule = in.attr("/", "conversion_rule");
  r.head_dim = static_cast<int>(in.attr_int("/", "head_dim"));
  r.d_mid = static_cast<int>(in.attr_int("/", "d_mid"));
  r.experts = static_cast<int>(in.attr_int("/", "experts"));
  const std::string bad = "ToMoE conversion file " + path + ": ";
  require(in.attr_int("/", "head_dim") > 0 && in.attr_int("/", "head_dim") <= (1 << 20) && in.attr_int("/", "d_mid") > 0 &&
              in.attr_int("/", "d_mid") <= (1 << 26),
          bad + "head_dim or d_mid out of range");
  r.qk_width = in.read<int>("/qk_width");
  r.vo_top_k = in.read<int>("/vo_top_k");
  r.mlp_width = in.read<int>("/mlp_width");
  r.mlp_min_width = in.read<int>("/mlp_min_width");
  r.mlp_union = in.read<double>("/mlp_union");
  r.vo_union = in.read<double>("/vo_union");
  r.expert_similarity = in.read<double>("/expert_similarity");
  const std::size_t N = static_cast<std::size_t>(r.experts);
  const auto widths = in.read<int>("/expert_widths");
  const auto jaccard = in.read<double>("/expert_jaccard");
  r.expert_widths = rows_of(widths, N);
  r.expert_jaccard = rows_of(jaccard, N * N);
  const std::size_t L = r.qk_width.size();
  require(L > 0 && r.vo_top_k.size() == L && r.mlp_width.size() == L && r.mlp_min_width.size() == L &&
              r.mlp_union.size() == L && r.vo_union.size() == L && r.expert_similarity.size() == L &&
              r.expert_widths.size() == L && r.expert_jaccard.size() == L,
          bad + "per-layer datasets disagree in length");
  // Values a conversion can produce; anything else is a corrupted file (and would mislead the plots).
  require(std::isfinite(r.target_active) && std::isfinite(r.active_ratio), bad + "target_active or active_ratio is not finite");
  auto all = [&](const auto& values, auto ok, const std::string& what) {
    require(std::all_of(values.begin(), values.end(), ok), bad + what);
  };
  auto fraction = [](double v) { return std::isnan(v) || (v >= 0 && v <= 1); };
  auto head_width = [&](int w) { return w >= 0 && w <= r.head_dim; };
  auto mlp_width = [&](int w) { return w >= 0 && w <= r.d_mid; };
  all(r.mlp_union, fraction, "mlp_union outside [0, 1]");
  all(r.vo_union, fraction, "vo_union outside [0, 1]");
  all(r.expert_similarity, fraction, "expert_similarity outside [0, 1]");
  all(jaccard, fraction, "expert_jaccard outside [0, 1]");
  all(r.qk_width, head_width, "qk_width outside [0, head_dim]");
  all(r.vo_top_k, head_width, "vo_top_k outside [0, head_dim]");
  all(r.mlp_width, mlp_width, "mlp_width outside [0, d_mid]");
  all(r.mlp_min_width, mlp_width, "mlp_min_width outside [0, d_mid]");
  all(widths, mlp_width, "expert_widths outside [0, d_mid]");
  return r;
}

}  // namespace moxlab
