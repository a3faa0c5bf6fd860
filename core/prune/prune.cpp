#include "core/prune/prune.h"

#include <cmath>

#include "core/common/error.h"
#include "core/prune/calibration_stats.h"
#include "core/prune/layer_pruning.h"
#include "core/prune/semi_structured.h"
#include "core/prune/width_pruning.h"

namespace moxlab {

const std::vector<std::string>& prune_methods() {
  static const std::vector<std::string> m{"none", "magnitude", "wanda", "taylor", "shortgpt", "wanda_2_4"};
  return m;
}

PruneResult prune_model(Transformer& model, const std::string& method, double active,
                        const std::vector<torch::Tensor>& calibration) {
  require(active > 0 && active <= 1, "prune: --active must be in (0, 1], got " + std::to_string(active));
  const ModelOptions& o = model.options();
  require(o.attention == "dense" && o.ffn == "dense", "prune: the baselines prune a dense model");
  PruneResult r;
  if (method == "none") {
    require(active == 1.0, "prune: method none keeps everything; use --active 1");
    r.active_ratio = 1.0;
    r.detail = "nothing removed (the dense reference)";
  } else if (method == "magnitude" || method == "wanda" || method == "taylor") {
    std::vector<LayerImportance> imp;
    if (method == "magnitude") imp = magnitude_importance(model);
    else if (method == "wanda") imp = wanda_importance(model, calibrate(model, calibration));
    else imp = taylor_importance(model, calibration);
    const auto keep = keep_best(structure_scores(imp, o), active);
    apply_width_pruning(model, keep);
    r.active_ratio = width_active_ratio(o, keep);
    r.detail = "kept per layer qk/vo/mlp widths " + std::to_string(static_cast<int>(keep[0].qk.sum().item<float>())) + "/" +
               std::to_string(static_cast<int>(keep[0].vo.sum().item<float>())) + "/" +
               std::to_string(static_cast<int>(keep[0].mlp.sum().item<float>()));
  } else if (method == "shortgpt") {
    const CalibrationStats s = calibrate(model, calibration);
    const auto gone = blocks_to_remove(s.block_influence, active);
    remove_blocks(model, gone);
    r.active_ratio = 1.0 - static_cast<double>(gone.size()) / o.n_layers;
    r.detail = "removed blocks";
    for (int l : gone) r.detail += " " + std::to_string(l) + " (BI " + std::to_string(s.block_influence[l]) + ")";
  } else if (method == "wanda_2_4") {
    require(std::abs(active - 0.5) < 1e-9, "prune: wanda_2_4 keeps exactly half of the weights; use --active 0.5");
    prune_n_m(model, calibrate(model, calibration), 2, 4);
    r.active_ratio = 0.5;
    r.detail = "2:4 in every attention and SwiGLU matrix";
  } else {
    std::string known;
    for (const auto& m : prune_methods()) known += (known.empty() ? "" : ", ") + m;
    throw Error("prune: unknown method '" + method + "' (known: " + known + ")");
  }
  return r;
}

}  // namespace moxlab
