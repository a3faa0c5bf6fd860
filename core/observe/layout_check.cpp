#include "core/observe/layout_check.h"

#include <algorithm>

#include "core/common/error.h"

namespace moxlab {

namespace {

// Sizes far beyond any model moxlab trains: larger ones are corrupted shapes.
constexpr std::uint64_t kMaxFeatures = 1u << 24;
constexpr std::uint64_t kMaxNames = 1u << 16;
constexpr std::size_t kMaxNameBytes = 4096;
constexpr std::uint64_t kMaxLayers = 1u << 12;
constexpr std::uint64_t kMaxExperts = 1u << 12;
constexpr std::uint64_t kMaxSubDims = 1u << 16;

std::string shape_text(const std::vector<std::uint64_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Datasets under group whose path ends in suffix, as the part between group + "/" and suffix.
std::vector<std::string> names_with_suffix(const TensorLogReader& r, const std::string& group, const std::string& suffix) {
  std::vector<std::string> out;
  if (!r.has_group(group)) return out;
  for (const auto& ds : r.datasets(group))
    if (ends_with(ds, suffix) && ds.size() > group.size() + 1 + suffix.size())
      out.push_back(ds.substr(group.size() + 1, ds.size() - group.size() - 1 - suffix.size()));
  return out;
}

}  // namespace

void require_clean_name(const std::string& name, const std::string& what) {
  bool ok = !name.empty();
  for (std::size_t i = 0; ok && i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    ok = len > 0 && i + len <= name.size() && (len > 1 || c >= 0x20) && c != 0x7f;
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(name[i + k]) >> 6) == 0x2;
    i += len == 0 ? 1 : len;
  }
  require(ok, what + " is not a valid name (empty, control characters or not UTF-8; corrupt file?)");
}

LayoutCheck::LayoutCheck(const TensorLogReader& r, std::string what) : r_(r), what_(std::move(what)) {
  if (!r_.has_attr("/", "layout_version")) return;  // files written before the attribute, or by tests
  version_ = r_.attr_int("/", "layout_version");
  require(version_ >= 1 && version_ <= kTensorLogLayoutVersion,
          "layout_version " + std::to_string(version_) + " is not one this moxlab reads (1.." +
              std::to_string(kTensorLogLayoutVersion) + ")");
}

void LayoutCheck::require(bool ok, const std::string& why) const { moxlab::require(ok, what_ + ": " + why); }

bool LayoutCheck::has(const std::string& dataset) const { return r_.has_dataset(dataset); }

std::vector<std::uint64_t> LayoutCheck::dataset(const std::string& name, DType dtype, std::size_t rank) const {
  require(r_.has_dataset(name), "no dataset " + name);
  const DatasetInfo info = r_.info(name);
  require(info.dtype == dtype, name + " holds " + dtype_name(info.dtype) + ", expected " + dtype_name(dtype));
  require(info.shape.size() == rank, name + " has shape " + shape_text(info.shape) + ", expected " +
                                         std::to_string(rank) + " dimension" + (rank == 1 ? "" : "s"));
  if (version_ >= 2) {
    require(info.checksummed, name + " has no checksum (layout_version 2 files checksum every dataset)");
    require(!info.variable_strings, name + " holds variable-length strings (not in layout_version 2 files)");
  }
  return info.shape;
}

void LayoutCheck::dataset_of_shape(const std::string& name, DType dtype, const std::vector<std::uint64_t>& shape) const {
  const auto s = dataset(name, dtype, shape.size());
  require(s == shape, name + " has shape " + shape_text(s) + ", expected " + shape_text(shape));
}

std::uint64_t LayoutCheck::strings(const std::string& name, std::uint64_t max_count, std::size_t max_width) const {
  const auto s = dataset(name, DType::str, 1);
  require(s[0] <= max_count, name + " holds " + std::to_string(s[0]) + " strings (at most " + std::to_string(max_count) + ")");
  const DatasetInfo info = r_.info(name);
  require(info.variable_strings || info.string_width <= max_width,
          name + " holds strings of " + std::to_string(info.string_width) + " bytes (at most " +
              std::to_string(max_width) + ")");
  return s[0];
}

void LayoutCheck::numeric_attr(const std::string& object, const std::string& key) const {
  (void)r_.attr_double(object, key);  // Error naming the attribute when absent or not numeric
}

CaptureLayout check_capture_layout(const TensorLogReader& r) {
  const LayoutCheck c(r, "capture " + r.path());
  CaptureLayout out;
  std::string rows_from;
  for (const char* name : {"/window", "/position", "/domain", "/tokens"}) {
    if (!c.has(name)) continue;
    const auto s = c.dataset(name, DType::i32, 1);
    if (rows_from.empty()) {
      out.rows = s[0];
      rows_from = name;
    }
    c.require(s[0] == out.rows, std::string(name) + " has " + std::to_string(s[0]) + " rows but " + rows_from + " has " +
                                    std::to_string(out.rows));
  }
  if (r.has_group("/probes")) {
    for (const auto& ds : r.datasets("/probes")) {
      const std::string tap = ds.substr(std::string("/probes/").size());
      require_clean_name(tap, c.what() + ": tap name '" + tap + "'");
      const auto s = c.dataset(ds, DType::f32, 2);
      c.require(s[0] > 0, "tap " + tap + " has no rows");
      c.require(s[1] > 0 && s[1] <= kMaxFeatures, "tap " + tap + " has " + std::to_string(s[1]) + " features");
      if (rows_from.empty()) {
        out.rows = s[0];
        rows_from = "tap " + tap;
      }
      c.require(s[0] == out.rows, "tap " + tap + " has " + std::to_string(s[0]) + " rows but " + rows_from + " has " +
                                      std::to_string(out.rows));
      out.taps.push_back(tap);
      out.features.push_back(s[1]);
    }
  }
  if (c.has("/domain_names")) out.domains = c.strings("/domain_names", kMaxNames, kMaxNameBytes);
  if (c.has("/text/offsets") || c.has("/text/bytes")) {
    c.dataset_of_shape("/text/offsets", DType::i64, {out.rows, 2});
    c.dataset("/text/bytes", DType::u8, 1);
    out.text = true;
  }
  return out;
}

void check_observations_layout(const TensorLogReader& r) {
  const LayoutCheck c(r, "observations file " + r.path());
  moxlab::require(r.has_group("/magnitude"), r.path() + " is not an observations file (no /magnitude group)");
  std::uint64_t nk = 0, np = 0;
  const bool shared = c.has("/shared/k") || c.has("/shared/p");
  if (shared) {
    nk = c.dataset("/shared/k", DType::i32, 1)[0];
    np = c.dataset("/shared/p", DType::f64, 1)[0];
    c.require(nk <= 1024 && np <= 1024, "/shared/k and /shared/p are too long");
  }
  for (const auto& tap : names_with_suffix(r, "/magnitude", "/pooled_cumshare")) {
    const std::string g = "/magnitude/" + tap;
    const auto d = c.dataset(g + "/pooled_cumshare", DType::f64, 1)[0];
    c.require(d >= 1 && d <= kMaxFeatures, g + "/pooled_cumshare has " + std::to_string(d) + " dims");
    c.dataset_of_shape(g + "/token_cumshare", DType::f64, {d});
    if (c.has("/shared/" + tap + "/counts")) {
      c.require(shared, "/shared/" + tap + " needs /shared/k and /shared/p");
      c.dataset_of_shape("/shared/" + tap + "/counts", DType::f64, {nk, np});
      c.dataset_of_shape("/shared/" + tap + "/chance", DType::f64, {nk, np});
    }
    const std::string p = "/pattern5/" + tap;
    if (c.has(p + "/magnitude")) {
      c.dataset_of_shape(p + "/magnitude", DType::f32, {5, d});
      c.dataset_of_shape(p + "/order", DType::i32, {d});
      c.dataset_of_shape(p + "/pattern", DType::i32, {d});
    }
  }
  std::uint64_t layers = 0;
  bool first = true;
  for (const std::string kind : {"attn.in", "attn.out", "ffn.in", "ffn.out"}) {
    const std::string name = "/sparsity/by_layer/" + kind;
    if (!c.has(name)) continue;
    const auto l = c.dataset(name, DType::f64, 1)[0];
    c.require(l <= kMaxLayers && (first || l == layers), name + " has " + std::to_string(l) + " layers");
    layers = l;
    first = false;
  }
  if (c.has("/flow/taps")) {
    const std::uint64_t taps = c.strings("/flow/taps", 64, 256);
    for (std::uint64_t l = 0; l <= kMaxLayers; ++l) {
      const std::string name = "/flow/layer_" + std::to_string(l) + "/median_rel";
      if (!c.has(name)) break;
      c.dataset_of_shape(name, DType::f64, {taps});
    }
  }
}

void check_routing_layout(const TensorLogReader& r) {
  const LayoutCheck c(r, "routing file " + r.path());
  moxlab::require(r.has_group("/routing") && r.has_dataset("/domain_names"),
                  r.path() + " is not a routing file (no /routing group or /domain_names)");
  const std::uint64_t d = c.strings("/domain_names", kMaxNames, kMaxNameBytes);
  c.require(d > 0, "/domain_names is empty");
  for (const auto& router : names_with_suffix(r, "/routing", "/selected")) {
    const std::string g = "/routing/" + router;
    const auto s = c.dataset(g + "/selected", DType::f64, 2);
    c.require(s[0] == d && s[1] >= 1 && s[1] <= kMaxSubDims,
              g + "/selected has shape [" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + "] for " +
                  std::to_string(d) + " domains");
    c.dataset_of_shape(g + "/score", DType::f64, s);
    c.dataset_of_shape(g + "/tokens", DType::i64, {d});
  }
}

void check_tomoe_conversion_layout(const TensorLogReader& r) {
  const LayoutCheck c(r, "ToMoE conversion file " + r.path());
  moxlab::require(r.has_attr("/", "layout_version") && r.has_dataset("/expert_jaccard"),
                  "ToMoE conversion file " + r.path() + ": not a moxlab ToMoE conversion file");
  for (const char* key : {"run_id", "target_active", "active_ratio", "head_dim", "d_mid", "experts"})
    c.numeric_attr("/", key);
  (void)r.attr("/", "conversion_rule");
  const std::int64_t experts = r.attr_int("/", "experts");
  c.require(experts >= 1 && static_cast<std::uint64_t>(experts) <= kMaxExperts,
            "experts = " + std::to_string(experts) + " is out of range");
  const auto n = static_cast<std::uint64_t>(experts);
  const std::uint64_t layers = c.dataset("/qk_width", DType::i32, 1)[0];
  c.require(layers >= 1 && layers <= kMaxLayers, "/qk_width has " + std::to_string(layers) + " layers");
  for (const char* name : {"/vo_top_k", "/mlp_width", "/mlp_min_width"}) c.dataset_of_shape(name, DType::i32, {layers});
  for (const char* name : {"/mlp_union", "/vo_union", "/expert_similarity"}) c.dataset_of_shape(name, DType::f64, {layers});
  c.dataset_of_shape("/expert_widths", DType::i32, {layers, n});
  c.dataset_of_shape("/expert_jaccard", DType::f64, {layers, n, n});
}

}  // namespace moxlab
