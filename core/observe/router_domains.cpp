#include "core/observe/router_domains.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/observe/layout_check.h"
#include "core/store/run_records.h"
#include "core/store/tensor_log_reader.h"
#include "core/store/tensor_log_writer.h"

namespace moxlab {

double RouterDomainStats::spread() const { return selection_spread(selected, domains.size(), sub_dims); }

double RouterDomainStats::least_used() const {
  if (domains.empty()) return 0;
  double least = 1;
  for (int i = 0; i < sub_dims; ++i) {
    double mean = 0;
    for (std::size_t d = 0; d < domains.size(); ++d) mean += selected[d * sub_dims + i];
    least = std::min(least, mean / static_cast<double>(domains.size()));
  }
  return least;
}

RouterDomainStats router_domain_stats(const std::string& router, const std::vector<float>& probs,
                                      const std::vector<float>& active, std::int64_t rows, int n,
                                      const std::vector<std::int32_t>& domain, const std::vector<std::string>& names) {
  require(n >= 1 && rows >= 0 && probs.size() == static_cast<std::size_t>(rows * n) && active.size() == probs.size() &&
              domain.size() == static_cast<std::size_t>(rows),
          "routing of " + router + ": router taps and /domain disagree in size");
  const std::size_t nd = names.size();
  std::vector<std::int64_t> count(nd, 0);
  std::vector<double> sel(nd * n, 0), score(nd * n, 0);
  for (std::int64_t t = 0; t < rows; ++t) {
    const std::int32_t d = domain[t];
    require(d >= 0 && static_cast<std::size_t>(d) < nd, "routing of " + router + ": domain index out of range");
    ++count[d];
    for (int i = 0; i < n; ++i) {
      sel[d * n + i] += active[t * n + i] > 0.5f ? 1.0 : 0.0;
      score[d * n + i] += probs[t * n + i];
    }
  }
  RouterDomainStats s;
  s.router = router;
  s.sub_dims = n;
  for (std::size_t d = 0; d < nd; ++d) {
    if (count[d] == 0) continue;
    s.domains.push_back(names[d]);
    s.tokens.push_back(count[d]);
    for (int i = 0; i < n; ++i) {
      s.selected.push_back(sel[d * n + i] / static_cast<double>(count[d]));
      s.score.push_back(score[d * n + i] / static_cast<double>(count[d]));
    }
  }
  return s;
}

namespace {

// Paths may hold bytes that are not UTF-8: replaced rather than thrown on.
std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// "blocks.3.ffn.router.probs" -> "blocks.3.ffn"; "" for other taps.
std::string router_of(const std::string& tap) {
  const std::string suffix = ".router.probs";
  if (tap.size() <= suffix.size() || tap.compare(tap.size() - suffix.size(), suffix.size(), suffix) != 0) return "";
  return tap.substr(0, tap.size() - suffix.size());
}

// Layer, then attn before ffn.
std::pair<int, std::string> router_order(const std::string& router) {
  int layer = -1;
  std::string part = router;
  if (router.rfind("blocks.", 0) == 0) {
    const auto dot = router.find('.', 7);
    try {
      layer = std::stoi(router.substr(7, dot - 7));
    } catch (const std::exception&) {
    }
    if (dot != std::string::npos) part = router.substr(dot + 1);
  }
  return {layer, part};
}

}  // namespace

RoutingReport observe_routing(const std::string& capture_path, const std::string& out_path) {
  require(std::filesystem::exists(capture_path), "no capture file at " + capture_path);
  const TensorLogReader in = TensorLogReader::open_checked(capture_path);
  const CaptureLayout layout = check_capture_layout(in);
  RoutingReport rep;
  rep.capture = std::filesystem::absolute(capture_path).string();
  rep.out = std::filesystem::absolute(out_path).string();
  if (in.has_attr("/", "run_id")) rep.run_id = in.attr_int("/", "run_id");

  std::vector<std::string> routers;
  for (const auto& tap : layout.taps) {
    const std::string r = router_of(tap);
    if (!r.empty() && in.has_dataset("/probes/" + r + ".router.topk")) routers.push_back(r);
  }
  require(!routers.empty(), capture_path + " has no MoHD router taps (blocks.<l>.<attn|ffn>.router.probs and .topk): "
                                           "capture a MoHD model with --taps 'blocks.*.router.*'");
  std::sort(routers.begin(), routers.end(),
            [](const std::string& a, const std::string& b) { return router_order(a) < router_order(b); });
  require(in.has_dataset("/domain") && layout.domains > 0,
          "capture " + capture_path + " has no /domain or /domain_names (needed to split tokens by domain)");
  const auto domain = in.read<std::int32_t>("/domain");
  // Windows (one context each) let the spread be tested against domain labels permuted across them.
  const auto window = in.has_dataset("/window") ? in.read<std::int32_t>("/window") : std::vector<std::int32_t>{};
  // Which split the capture's rows come from: validation text, or the test images (image_capture.h).
  const std::string split = in.has_attr("/", "split") ? in.attr("/", "split") : "val";
  require_clean_name(split, "capture " + capture_path + ": split '" + split + "'");
  const auto names = in.read_strings("/domain_names");
  for (const auto& name : names) require_clean_name(name, "capture " + capture_path + ": domain name '" + name + "'");

  TensorLogWriter w(out_path);
  w.set_attr("/", "source", rep.capture);
  if (rep.run_id >= 0) w.set_attr_int("/", "run_id", rep.run_id);
  w.set_attr_int("/", "layout_version", kTensorLogLayoutVersion);
  bool wrote_names = false;
  for (const auto& r : routers) {
    const std::string probs_name = "/probes/" + r + ".router.probs";
    const auto shape = in.shape(probs_name);
    require(shape.size() == 2 && in.shape("/probes/" + r + ".router.topk") == shape,
            capture_path + ": " + r + " router taps must both be [tokens, sub_dims]");
    // The per-domain tables hold domains x sub-dims values: a corrupted width must not size them.
    require(shape[1] <= (1u << 16) && names.size() * shape[1] <= (1u << 26),
            capture_path + ": " + r + " router taps have " + std::to_string(shape[1]) + " sub-dimensions");
    const auto active = in.read<float>("/probes/" + r + ".router.topk");
    const auto rows = static_cast<std::int64_t>(shape[0]);
    RouterDomainStats s = router_domain_stats(r, in.read<float>(probs_name), active, rows, static_cast<int>(shape[1]),
                                              domain, names);
    if (!window.empty())
      s.null = spread_permutation_null(active, rows, s.sub_dims, domain, window, kSpreadPermutations);
    if (!wrote_names) {
      w.write_strings("/domain_names", s.domains);
      wrote_names = true;
    }
    const std::string g = "/routing/" + r;
    const std::vector<std::uint64_t> dn = {s.domains.size(), static_cast<std::uint64_t>(s.sub_dims)};
    w.write(g + "/tokens", s.tokens);
    w.write(g + "/selected", s.selected.data(), dn);
    w.write(g + "/score", s.score.data(), dn);
    w.set_attr_int(g + "/selected", "sub_dims", s.sub_dims);
    w.set_attr_double(g + "/selected", "spread", s.spread());
    w.set_attr_double(g + "/selected", "least_used", s.least_used());
    if (s.null.permutations > 0) {
      w.set_attr_double(g + "/selected", "spread_null_q95", s.null.q95);
      w.set_attr_double(g + "/selected", "spread_p", s.null.p);
      w.set_attr_int(g + "/selected", "spread_permutations", s.null.permutations);
    }

    for (std::size_t d = 0; d < s.domains.size(); ++d)
      for (int i = 0; i < s.sub_dims; ++i) {
        const nlohmann::json base = {{"split", split}, {"router", r}, {"domain", s.domains[d]}, {"sub_dim", i},
                                     {"tokens", s.tokens[d]}, {"capture", rep.capture}};
        nlohmann::json sel = base, sc = base;
        sel["metric"] = "selection_fraction";
        sel["definition"] = "fraction of the domain's captured " + split + " tokens whose active set (shared + routed "
                            "top-k: MoHD sub-dimensions, Eq. 12, or MoH heads, Eq. 5) contains this sub-dimension or head";
        sc["metric"] = "router_score";
        sc["definition"] = "mean over the domain's captured " + split + " tokens of the router score (MoHD s_i, Eq. 11; MoH gate g_i, Eq. 4)";
        const std::string tail = r + "/" + result_key_segment(s.domains[d]) + "/" + std::to_string(i);
        rep.results.push_back({"routing/selected/" + tail, s.selected[d * s.sub_dims + i], dump(sel)});
        rep.results.push_back({"routing/score/" + tail, s.score[d * s.sub_dims + i], dump(sc)});
      }
    rep.results.push_back({"routing/spread/" + r, s.spread(),
                           nlohmann::json{{"metric", "selection_spread"}, {"split", split}, {"router", r},
                                          {"definition", "max over sub-dimensions of (max - min) across domains of the "
                                                         "selection fraction"}}
                               .dump()});
    rep.results.push_back({"routing/least_used/" + r, s.least_used(),
                           nlohmann::json{{"metric", "least_used_fraction"}, {"split", split}, {"router", r},
                                          {"definition", "min over sub-dimensions of the selection fraction averaged "
                                                         "over domains (k/n when balanced, 0 when collapsed)"}}
                               .dump()});
    if (s.null.permutations > 0) {
      const std::string how = "domain labels permuted across the capture's " + std::to_string(s.null.windows) +
                              " windows (each kept whole), " + std::to_string(s.null.permutations) + " permutations";
      rep.results.push_back({"routing/spread_null95/" + r, s.null.q95,
                             nlohmann::json{{"metric", "selection_spread_null_q95"}, {"split", split}, {"router", r},
                                            {"definition", "95th percentile of the selection spread under " + how}}
                                 .dump()});
      rep.results.push_back({"routing/spread_p/" + r, s.null.p,
                             nlohmann::json{{"metric", "selection_spread_p"}, {"split", split}, {"router", r},
                                            {"definition", "permutation p-value of the selection spread: (1 + #{spread "
                                                           "under " + how + " >= observed}) / (1 + permutations)"}}
                                 .dump()});
    }
    rep.routers.push_back(std::move(s));
  }
  w.finish();
  return rep;
}

}  // namespace moxlab
