#include "experiments/runner/prune_run.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/shards/dataset.h"
#include "core/model/param_count.h"
#include "core/prune/live_weights.h"
#include "kernels/runtime/torch_threads.h"
#include "core/store/run_store.h"
#include "core/train/checkpoint.h"
#include "core/train/lm_objective.h"
#include "experiments/runner/run_registry.h"

namespace moxlab {

PruneRunResult run_pruning(const PruneRunOptions& o) {
  auto log = [&](const std::string& s) { if (o.log) o.log(s); };
  set_torch_threads(o.threads);
  require(file_exists(o.checkpoint), "prune: checkpoint " + o.checkpoint + " does not exist");
  const PruneOptions& p = o.prune;
  require(p.calibration >= 1, "prune: need at least one calibration batch");
  require(std::find(prune_methods().begin(), prune_methods().end(), p.method) != prune_methods().end(),
          "prune: unknown method '" + p.method + "'");
  require(p.active > 0 && p.active <= 1, "prune: --active must be in (0, 1], got " + std::to_string(p.active));
  LoadedCheckpoint ck = load_checkpoint(o.checkpoint);
  Config cfg = ck.config;
  cfg.data.tokenizer = ck.meta.tokenizer_spec;  // the model's own vocabulary
  if (!o.store.empty()) cfg.run.store = o.store;
  char active[32];
  std::snprintf(active, sizeof(active), "%g", p.active);
  cfg.run.kind = "prune";
  cfg.run.name = o.name.empty() ? "prune_" + p.method : o.name;
  cfg.run.variant = o.variant.empty() ? p.method + "_" + active : o.variant;
  cfg.train.init_from = o.init_from_ref.empty() ? o.checkpoint : o.init_from_ref;  // the model this run prunes
  if (o.seed) cfg.train.seed = *o.seed;  // which training windows calibrate (and the run's seed in tables)
  cfg.prune = p;

  // Calibration: the first training windows of the checkpoint's data (the sampler the trainer uses).
  const PreparedData data = prepare_data(cfg.data, log);
  auto train = std::make_shared<ShardTokenSource>(data.shards_dir, Split::Train);
  auto val = std::make_shared<ShardTokenSource>(data.shards_dir, Split::Val);
  const LmObjective sampler(cfg, ck.model, train, val);
  std::vector<torch::Tensor> windows;
  for (int s = 0; s < p.calibration; ++s) {
    auto [x, y] = sampler.batch(s, 0);
    windows.push_back(torch::cat({x, y.narrow(1, y.size(1) - 1, 1)}, 1));
  }

  PruneRunResult out;
  out.prune = prune_model(*ck.model, p.method, p.active, windows);
  log("pruned with " + p.method + ": active ratio " + std::to_string(out.prune.active_ratio) + "; " + out.prune.detail);

  const RegisteredRun run = register_run(cfg, "prune", p.method + " of " + o.checkpoint, data.digest, o.sweep_id);
  out.run_id = run.id;
  if (o.on_run) o.on_run(run.id);
  out.checkpoint = run.dir + "/checkpoint.pt";
  RunStore store(cfg.run.store);
  try {
    CheckpointMeta meta = ck.meta;
    meta.config_json = cfg.to_json();
    meta.run_id = run.id;
    meta.source = "prune:" + p.method;
    save_checkpoint(out.checkpoint, *ck.model, nullptr, meta);
    store.add_artifact(run.id, "checkpoint", out.checkpoint);
    // Counts: the dense non-embedding total; active drops the dead weights of the seven matrices.
    ParamCount counts = count_parameters(*ck.model);
    counts.active = counts.total - live_matrix_weights(*ck.model).dead();
    record_param_counts(run.id, cfg.run.store, counts);
    store.put_result(run.id, "prune/active_ratio", out.prune.active_ratio,
                     nlohmann::json{{"metric", "ratio"},
                                    {"definition", "kept attention and SwiGLU matrix parameters over the dense ones "
                                                   "(ToMoE Eq. 8 accounting); method " + p.method + ": " + out.prune.detail}}
                         .dump());
    store.update_status(run.id, RunStatus::finished);
  } catch (const std::exception& e) {
    store.update_status(run.id, RunStatus::failed, e.what());
    throw;
  }
  return out;
}

}  // namespace moxlab
