#include "core/observe/observe_capture.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/observe/consecutive_runs.h"
#include "core/observe/dim_ranks.h"
#include "core/observe/layout_check.h"
#include "core/observe/magnitude_profile.h"
#include "core/observe/magnitude_summary.h"
#include "core/observe/shared_dims.h"
#include "core/observe/shared_specific.h"
#include "core/store/tensor_log_reader.h"
#include "core/store/tensor_log_writer.h"

namespace moxlab {

const std::vector<std::string>& flow_tap_kinds() {
  static const std::vector<std::string> kinds = {"attn.in",  "attn.q",   "attn.k",  "attn.v",  "attn.ctx",
                                                 "attn.out", "resid.mid", "ffn.in", "ffn.gate", "ffn.up",
                                                 "ffn.act",  "ffn.out",  "resid.out"};
  return kinds;
}

std::pair<int, std::string> split_tap(const std::string& tap) {
  const std::string prefix = "blocks.";
  const auto dot = tap.find('.', prefix.size());
  if (tap.rfind(prefix, 0) != 0 || dot == std::string::npos || dot == prefix.size()) return {-1, tap};
  const std::string layer = tap.substr(prefix.size(), dot - prefix.size());
  // At most 6 digits: a layer index, never a number std::stoi cannot hold (names come from files).
  if (layer.size() > 6 || !std::all_of(layer.begin(), layer.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return {-1, tap};
  return {std::stoi(layer), tap.substr(dot + 1)};
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<std::string> kSparsityKinds = {"attn.in", "attn.out", "ffn.in", "ffn.out"};  // Fig. 3 middle
const int kSharedRuns[] = {2, 5, 9, 20};   // headline k of Fig. 3 right (the paper quotes 2 and 9)
const int kSharedPercents[] = {20, 80};    // both readings of the paper's "top 20%" (shared_dims.h)
constexpr int kPatternRun = 5;             // Fig. 5

int kind_index(const std::string& kind) {
  const auto& k = flow_tap_kinds();
  return static_cast<int>(std::find(k.begin(), k.end(), kind) - k.begin());  // unknown kinds sort last
}

// Collects results; each carries its definition and the tap's size.
struct Results {
  std::string capture;
  std::vector<ObservedResult>& out;

  void add(const std::string& metric, const TapObservation& o, double value, const std::string& definition,
           nlohmann::json extra = nlohmann::json::object()) {
    if (std::isnan(value)) return;
    extra["metric"] = metric;
    extra["definition"] = definition;
    extra["tap"] = o.tap;
    extra["tokens"] = o.tokens;
    extra["dims"] = o.dims;
    extra["capture"] = capture;
    // The capture's path may hold bytes that are not UTF-8: replaced rather than thrown on.
    out.push_back({"observe/" + metric + "/" + o.tap, value, extra.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  }
};

// Fig. 3 left + the Fig. 4 numbers of one tap.
void observe_magnitudes(const ActivationMatrix& x, const ObserveOptions& opt, TensorLogWriter& w, TapObservation& o,
                        Results& res) {
  const MagnitudeProfile p = magnitude_profile(x);
  const MagnitudeSummary s = magnitude_summary(x);
  const std::string g = "/magnitude/" + o.tap;
  w.write(g + "/pooled_sorted", p.pooled_sorted);
  w.write(g + "/pooled_cumshare", p.pooled_cumshare);
  w.write(g + "/token_sorted", p.token_sorted);
  w.write(g + "/token_cumshare", p.token_cumshare);
  w.set_attr_double(g, "median", s.median);
  w.set_attr_double(g, "mean", s.mean);
  w.set_attr_int(g, "tokens", o.tokens);
  w.set_attr_int(g, "dims", o.dims);
  o.median = s.median;
  o.mean = s.mean;
  const std::int64_t half = top_half(o.dims);
  o.share_top50 = top_k_share(p.pooled_cumshare, half);
  o.token_share_top50 = top_k_share(p.token_cumshare, half);

  const std::string pooled = "share of sum_i M_i held by the k dims of largest M_i, M_i = mean over tokens of x_i^2 "
                             "(MoHD Fig. 3 left, dims sorted once for all tokens)";
  const std::string token = "mean over tokens of the share of the token's sum_i x_i^2 held by its k largest x_i^2 "
                            "(MoHD Fig. 3 left, dims sorted per token)";
  // gaussian: the same share for an i.i.d. Gaussian vector (no learned structure), for comparison.
  auto extra = [&](std::int64_t k) {
    return nlohmann::json{{"k", k}, {"gaussian", gaussian_top_share(static_cast<double>(k) / static_cast<double>(o.dims))}};
  };
  res.add("share_top50", o, o.share_top50, pooled + ", k = ceil(d/2)", extra(half));
  res.add("token_share_top50", o, o.token_share_top50, token + ", k = ceil(d/2)", extra(half));
  for (std::int64_t k : opt.top_k.empty() ? default_top_k(o.dims) : opt.top_k) {
    res.add("share_top" + std::to_string(k), o, top_k_share(p.pooled_cumshare, k), pooled, extra(k));
    res.add("token_share_top" + std::to_string(k), o, top_k_share(p.token_cumshare, k), token, extra(k));
  }
  res.add("median", o, s.median, "median of x^2 over all (token, dim) elements (MoHD Fig. 4, absolute)");
}

// Fig. 3 middle, Eq. 2.
void observe_sparsity(const ActivationMatrix& x, const ObserveOptions& opt, const std::vector<double>& grid,
                      TensorLogWriter& w, TapObservation& o, Results& res) {
  const std::string g = "/sparsity/" + o.tap;
  w.write(g + "/curve", sparsity_curve(x, grid));
  o.sparsity = sparsity(x, opt.eps);
  w.write(g + "/value", &o.sparsity, {});
  res.add("sparsity", o, o.sparsity, "mean over tokens of (1/d) sum_i 1(x_i^2 < eps) (MoHD Eq. 2)", {{"eps", opt.eps}});
}

// Fig. 3 right and Fig. 5.
void observe_shared(const ActivationMatrix& x, const std::vector<std::int32_t>& run_length, const ObserveOptions& opt,
                    TensorLogWriter& w, TapObservation& o, Results& res) {
  const DimRanks ranks = rank_dimensions(x);
  const SharedDims sd = shared_dims(ranks, run_length, opt.max_run);
  const std::uint64_t nk = sd.k.size(), np = sd.percent.size();
  w.write("/shared/" + o.tap + "/counts", sd.counts.data(), {nk, np});
  w.write("/shared/" + o.tap + "/chance", sd.chance.data(), {nk, np});
  w.write("/shared/" + o.tap + "/runs", sd.runs);
  for (int k : kSharedRuns)
    for (int p : kSharedPercents)
      if (k <= opt.max_run)
        res.add("shared_k" + std::to_string(k) + "_top" + std::to_string(p), o, sd.count(k, p),
                "mean over runs of k consecutive tokens (same window) of the number of dims among the "
                "ceil(p/100 d) largest x^2 of every token of the run (MoHD Fig. 3 right)",
                {{"k", k}, {"p", p}, {"high", top_count(p, o.dims)}, {"runs", sd.runs[k - 2]},
                 {"chance", sd.chance_at(k, p)}});

  const SharedSpecific ss = shared_specific(x, ranks, run_length, opt.top_percent, kPatternRun, opt.example_row);
  const std::string g = "/pattern5/" + o.tap;
  w.write(g + "/counts", ss.pattern_counts);
  if (ss.example_row >= 0) {
    w.write(g + "/magnitude", ss.example_magnitude.data(), {std::uint64_t{kPatternRun}, static_cast<std::uint64_t>(o.dims)});
    w.write(g + "/order", ss.order);
    w.write(g + "/pattern", ss.pattern);
  }
  w.set_attr_double(g, "all", ss.all_high);
  w.set_attr_double(g, "one_total", ss.one_high_total);
  w.set_attr_double(g, "one_per_token", ss.one_high_per_token);
  w.set_attr_double(g, "chance_all", ss.chance_all);
  w.set_attr_double(g, "chance_one_total", ss.chance_one_total);
  w.set_attr_int(g, "runs", ss.runs);
  w.set_attr_int(g, "high", ss.high);
  w.set_attr_int(g, "example_row", ss.example_row);
  o.shared5_all = ss.all_high;
  o.shared5_one_per_token = ss.one_high_per_token;
  o.shared5_chance_all = ss.chance_all;
  o.shared5_chance_one_per_token = ss.chance_one_total / kPatternRun;
  const nlohmann::json common = {{"p", opt.top_percent}, {"high", ss.high}, {"runs", ss.runs}};
  nlohmann::json all = common, one = common;
  all["chance"] = o.shared5_chance_all;
  one["total"] = ss.one_high_total;
  one["chance"] = o.shared5_chance_one_per_token;
  res.add("shared5_all", o, ss.all_high,
          "mean over runs of 5 consecutive tokens of the number of dims among the top p% by x^2 of all 5 (MoHD Fig. 5)",
          all);
  res.add("shared5_one", o, ss.one_high_per_token,
          "mean over runs of 5 consecutive tokens of the number of dims among the top p% by x^2 of exactly one "
          "of the 5, divided by 5 (per token; MoHD Fig. 5)",
          one);
}

// Reads one tap (its shape checked by check_capture_layout).
std::vector<float> read_tap(const TensorLogReader& in, const std::string& tap) {
  std::vector<float> v = in.read<float>("/probes/" + tap);
  require(std::all_of(v.begin(), v.end(), [](float f) { return std::isfinite(f); }),
          "capture " + in.path() + ": tap " + tap + " has non-finite values");
  return v;
}

// Fig. 4 per layer (relative to attn.in) and Fig. 3 middle per layer.
// Sets each tap's flow_median_pct.
void write_layer_views(std::vector<TapObservation>& taps, TensorLogWriter& w, Results& res) {
  const auto& kinds = flow_tap_kinds();
  std::map<int, std::map<std::string, TapObservation*>> by_layer;
  int layers = 0;
  for (auto& o : taps)
    if (o.layer >= 0) {
      by_layer[o.layer][o.kind] = &o;
      layers = std::max(layers, o.layer + 1);
    }
  for (const auto& kind : kSparsityKinds) {
    std::vector<double> v(static_cast<std::size_t>(layers), kNaN);
    for (const auto& [l, m] : by_layer)
      if (m.count(kind)) v[l] = m.at(kind)->sparsity;
    if (layers > 0) w.write("/sparsity/by_layer/" + kind, v);
  }
  w.write_strings("/flow/taps", kinds);
  for (const auto& [l, m] : by_layer) {
    if (!m.count("attn.in")) continue;
    const TapObservation& base = *m.at("attn.in");
    std::vector<double> median(kinds.size(), kNaN), mean(kinds.size(), kNaN), median_rel(kinds.size(), kNaN),
        mean_rel(kinds.size(), kNaN);
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      if (!m.count(kinds[i])) continue;
      TapObservation& o = *m.at(kinds[i]);
      median[i] = o.median;
      mean[i] = o.mean;
      median_rel[i] = 100.0 * o.median / base.median;
      mean_rel[i] = 100.0 * o.mean / base.mean;
      o.flow_median_pct = median_rel[i];
      const nlohmann::json ref = {{"reference", base.tap}};
      res.add("flow_median", o, median_rel[i],
              "100 * median of x^2 over all (token, dim) elements / the same for the layer's attn.in (MoHD Fig. 4)", ref);
      res.add("flow_mean", o, mean_rel[i],
              "100 * mean of x^2 over all (token, dim) elements / the same for the layer's attn.in (MoHD Fig. 4)", ref);
    }
    const std::string g = "/flow/layer_" + std::to_string(l);
    w.write(g + "/median", median);
    w.write(g + "/mean", mean);
    w.write(g + "/median_rel", median_rel);
    w.write(g + "/mean_rel", mean_rel);
  }
}

// The residual branches' RMS per layer (branch_scale.h), as arrays and as results
// observe/branch_rms/blocks.<l>.attn|ffn.
void write_branch_scales(const std::vector<BranchScale>& branches, std::int64_t tokens, TensorLogWriter& w, Results& res) {
  std::vector<double> attn, ffn;
  for (const BranchScale& b : branches) {
    attn.push_back(b.attn_rms);
    ffn.push_back(b.ffn_rms);
    for (const auto& [part, value, definition] :
         {std::make_tuple("attn", b.attn_rms, "RMS over (token, dim) of resid.mid[l] - resid.out[l-1]: the attention branch added to the residual"),
          std::make_tuple("ffn", b.ffn_rms, "RMS over (token, dim) of resid.out[l] - resid.mid[l]: the FFN branch added to the residual")}) {
      TapObservation o;
      o.tap = "blocks." + std::to_string(b.layer) + "." + part;
      o.tokens = tokens;
      res.add("branch_rms", o, value, definition);
    }
  }
  w.write("/branch/attn_rms", attn);
  w.write("/branch/ffn_rms", ffn);
}

}  // namespace

ObserveReport observe_capture(const std::string& capture_path, const std::string& out_path, const ObserveOptions& opt) {
  require(file_exists(capture_path), "no capture file at " + capture_path);
  require(opt.max_run >= 2, "observe: max run length must be >= 2");
  require(opt.eps > 0, "observe: eps must be positive");
  const TensorLogReader in = TensorLogReader::open_checked(capture_path);
  const CaptureLayout layout = check_capture_layout(in);
  const std::string where = "capture " + capture_path;
  for (const char* name : {"/window", "/position"})
    require(in.has_dataset(name), where + " has no " + name + " dataset (needed to find consecutive tokens)");
  require(in.has_group("/probes"), where + " has no /probes group");
  const std::vector<std::int32_t> run_length =
      consecutive_run_lengths(in.read<std::int32_t>("/window"), in.read<std::int32_t>("/position"));

  ObserveReport rep;
  rep.capture = std::filesystem::absolute(capture_path).string();
  rep.out = out_path;
  rep.tokens = static_cast<std::int64_t>(run_length.size());
  require(rep.tokens > 0, where + " has no rows in /window");
  if (in.has_attr("/", "run_id")) rep.run_id = in.attr_int("/", "run_id");
  std::vector<std::string> taps = layout.taps;
  require(!taps.empty(), where + " has no taps under /probes");
  auto order = [](const std::string& t) {
    const auto [layer, kind] = split_tap(t);
    return std::make_tuple(layer, kind_index(kind), t);
  };
  std::sort(taps.begin(), taps.end(), [&](const std::string& a, const std::string& b) { return order(a) < order(b); });

  TensorLogWriter w(out_path);
  w.set_attr("/", "source", rep.capture);
  if (rep.run_id >= 0) w.set_attr_int("/", "run_id", rep.run_id);
  w.set_attr_int("/", "layout_version", kTensorLogLayoutVersion);
  w.set_attr_int("/", "tokens", rep.tokens);
  w.set_attr_double("/", "eps", opt.eps);
  w.set_attr_double("/", "p", opt.top_percent);
  w.set_attr_int("/", "max_run", opt.max_run);
  const std::vector<double> grid = log_eps_grid();
  w.write("/sparsity/eps_grid", grid);
  std::vector<std::int32_t> ks;
  for (int k = 2; k <= opt.max_run; ++k) ks.push_back(k);
  std::vector<double> percents;
  for (int p = 1; p <= 100; ++p) percents.push_back(p);
  w.write("/shared/k", ks);
  w.write("/shared/p", percents);

  Results res{rep.capture, rep.results};
  for (const auto& tap : taps) {
    TapObservation o;
    o.tap = tap;
    std::tie(o.layer, o.kind) = split_tap(tap);
    o.tokens = rep.tokens;
    o.dims = static_cast<std::int64_t>(layout.features[std::find(layout.taps.begin(), layout.taps.end(), tap) - layout.taps.begin()]);
    const std::vector<float> values = read_tap(in, tap);
    const ActivationMatrix x{values.data(), o.tokens, o.dims};
    observe_magnitudes(x, opt, w, o, res);
    observe_sparsity(x, opt, grid, w, o, res);
    observe_shared(x, run_length, opt, w, o, res);
    rep.taps.push_back(o);
    if (opt.log) opt.log("observed " + tap + " [" + std::to_string(o.tokens) + " x " + std::to_string(o.dims) + "]");
  }
  write_layer_views(rep.taps, w, res);
  const auto has = [&](const std::string& tap) { return std::find(taps.begin(), taps.end(), tap) != taps.end(); };
  rep.branches = branch_scales(has, [&](const std::string& tap) { return read_tap(in, tap); });
  if (!rep.branches.empty()) write_branch_scales(rep.branches, rep.tokens, w, res);
  w.finish();
  return rep;
}

}  // namespace moxlab
