#include "experiments/runner/tomoe_finish.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/engine/inference_plan.h"
#include "core/model/tomoe/tomoe_conversion.h"
#include "core/observe/tomoe_conversion_file.h"
#include "core/store/run_store.h"
#include "experiments/runner/run_registry.h"

namespace moxlab {

namespace {
// The HDF5 record of a conversion (core/observe/tomoe_conversion_file.h); layers with a dense FFN get
// full-width experts and a Jaccard of 1 so every layer has N experts.
TomoeConversionRecord conversion_record(const TomoeConversion& c, const Config& cfg, std::int64_t run) {
  const ModelOptions& o = cfg.model;
  const int n = o.tomoe.experts;
  TomoeConversionRecord r;
  r.run_id = run;
  r.target_active = o.tomoe.active;
  r.active_ratio = c.active_ratio;
  r.conversion_rule = o.tomoe.conversion;
  r.head_dim = o.head_dim();
  r.d_mid = o.resolved_ffn_hidden();
  r.experts = n;
  r.qk_width = c.qk_width;
  r.vo_top_k = c.vo_top_k;
  r.mlp_width = c.mlp_width;
  r.mlp_min_width = c.mlp_min_width;
  r.mlp_union = c.mlp_union;
  r.vo_union = c.vo_union;
  r.expert_similarity = c.expert_similarity;
  for (std::size_t l = 0; l < c.qk_width.size(); ++l) {
    const bool routed = static_cast<int>(c.expert_widths[l].size()) == n;
    r.expert_widths.push_back(routed ? c.expert_widths[l] : std::vector<int>(n, r.d_mid));
    r.expert_jaccard.push_back(routed ? c.expert_jaccard[l] : std::vector<double>(static_cast<std::size_t>(n) * n, 1.0));
  }
  return r;
}
std::string ratio_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}
}  // namespace

bool tomoe_target_reached(double active_ratio, double target) {
  return std::abs(active_ratio - target) <= kTomoeTargetTolerance;
}

std::string tomoe_target_line(double active_ratio, double target, std::int64_t steps) {
  const std::string head = "ToMoE conversion: active ratio " + ratio_text(active_ratio);
  if (tomoe_target_reached(active_ratio, target)) return head + ", at the target " + ratio_text(target);
  if (active_ratio < target)
    return head + " is below the target " + ratio_text(target) + " (more pruned than asked; tagged " + kTomoeTargetMissedTag + ")";
  return head + " did NOT reach the target " + ratio_text(target) + " after " + std::to_string(steps) +
         " steps (tagged " + kTomoeTargetMissedTag + "): train the routing longer, e.g. --steps " +
         std::to_string(std::max<std::int64_t>(200, steps * 4));
}

void finish_tomoe_conversion(Transformer& model, const LmObjective& objective, const Config& cfg, std::int64_t run,
                             const std::function<void(const std::string&)>& log) {
  constexpr int kCalibrationBatches = 8;
  if (log) log("ToMoE conversion: v/o top-K from " + std::to_string(kCalibrationBatches) + " calibration batches, then a validation pass");
  std::vector<torch::Tensor> calibration;
  for (int s = 0; s < kCalibrationBatches; ++s) calibration.push_back(objective.batch(s, 0).first);
  InferencePlan plan(model);
  const TomoeConversion c =
      convert_to_tomoe_moe(model, calibration, [&plan](const torch::Tensor& t, Analysis& an) { plan.forward(t, {}, &an); });
  record_param_counts(run, cfg.run.store, c.params);
  RunStore store(cfg.run.store);
  const auto count = [](const std::string& def) { return nlohmann::json{{"metric", "count"}, {"definition", def}}.dump(); };
  store.put_result(run, "tomoe/active_ratio", c.active_ratio,
                   nlohmann::json{{"metric", "ratio"},
                                  {"definition", "T(d_MoE) / T_total (ToMoE Eq. 8): kept attention and SwiGLU matrix "
                                                 "parameters per token (widest expert, v/o top-K) over the dense ones"}}
                       .dump());
  if (!tomoe_target_reached(c.active_ratio, cfg.model.tomoe.active)) {
    std::vector<std::string> tags = store.get_run(run).tags;
    if (std::find(tags.begin(), tags.end(), kTomoeTargetMissedTag) == tags.end()) tags.push_back(kTomoeTargetMissedTag);
    store.set_tags(run, tags);
  }
  std::string widths;
  for (std::size_t l = 0; l < c.vo_top_k.size(); ++l) {
    const std::string k = "tomoe/layer" + std::to_string(l) + "/";
    store.put_result(run, k + "qk_width", c.qk_width[l], count("kept query/key head dims (static RoPE-paired mask)"));
    store.put_result(run, k + "vo_top_k", c.vo_top_k[l], count(cfg.model.tomoe.conversion == "code"
                                   ? "value/output head dims per token (top-K; K = widest token per calibration batch, "
                                     "training noise, averaged over batches)"
                                   : "value/output head dims per token (top-K; K = mean kept count, noise-free)"));
    store.put_result(run, k + "mlp_width", c.mlp_width[l], count("kept SwiGLU channels of the widest expert"));
    store.put_result(run, k + "mlp_min_width", c.mlp_min_width[l], count("kept SwiGLU channels of the narrowest expert"));
    const auto ratio = [](const std::string& def) { return nlohmann::json{{"metric", "ratio"}, {"definition", def}}.dump(); };
    store.put_result(run, k + "mlp_union", c.mlp_union[l], ratio("share of SwiGLU channels kept by at least one expert (Fig. 5a)"));
    store.put_result(run, k + "vo_union", c.vo_union[l],
                     ratio("share of v/o head dims kept (top-K) by at least one of the 8 calibration batches' tokens"));
    store.put_result(run, k + "expert_similarity", c.expert_similarity[l],
                     ratio("mean pairwise Jaccard similarity |s_i AND s_j| / |s_i OR s_j| of the experts' channel masks (Fig. 9)"));
    for (std::size_t e = 0; e < c.expert_widths[l].size(); ++e)
      store.put_result(run, k + "expert" + std::to_string(e) + "/width", c.expert_widths[l][e],
                       count("kept SwiGLU channels of this expert (Fig. 8)"));
    widths += (l ? ", " : "") + std::to_string(c.qk_width[l]) + "/" + std::to_string(c.vo_top_k[l]) + "/" +
              std::to_string(c.mlp_width[l]);
  }
  // The whole record as one file beside the run for the viewer's ToMoE panel (Fig. 4/7, 5a, 8, 9).
  // A failure here (disk full, ...) must not fail a trained run: the results above are already stored.
  const auto run_dirs = store.artifacts(run, "run_dir");
  try {
    require(!run_dirs.empty(), "run " + std::to_string(run) + " has no run directory recorded");
    const std::string path = std::filesystem::absolute(run_dirs.back().path + "/tomoe-conversion.h5").string();
    write_tomoe_conversion(path, conversion_record(c, cfg, run));
    if (store.artifacts(run, "tomoe_conversion").empty()) store.add_artifact(run, "tomoe_conversion", path);
  } catch (const std::exception& e) {
    if (log) log(std::string("ToMoE conversion file not written: ") + e.what());
  }
  if (log) log("ToMoE conversion: per layer qk/vo/mlp widths " + widths);
}

}  // namespace moxlab
