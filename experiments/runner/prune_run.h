// `moxlab prune METHOD --checkpoint P --active R` as a library call: the static baselines of ToMoE's
// tables (core/prune/prune.h) applied to a dense checkpoint, calibrated on training windows of the
// checkpoint's own data, saved as a new run (kind "prune") whose checkpoint `moxlab eval --run ID`
// evaluates like any other.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/prune/prune.h"
#include "core/prune/prune_options.h"

namespace moxlab {

struct PruneRunOptions {
  std::string checkpoint;
  // How the run's config names its start (train.init_from): "" = the checkpoint path; a sweep member passes
  // its reference (sweep:NAME/VARIANT), so seeds of one member differ only in train.seed and pool in tables.
  std::string init_from_ref;
  PruneOptions prune;            // method, active ratio, calibration batches
  std::string store;             // "" = the checkpoint's run.store
  std::string name;              // run.name ("" = prune_METHOD)
  std::string variant;           // run.variant for tables ("" = METHOD_ACTIVE)
  int threads = 0;
  std::optional<std::int64_t> seed;              // train.seed of the calibration sampler (default: the checkpoint's)
  std::optional<std::int64_t> sweep_id;          // a sweep member's run
  std::function<void(std::int64_t)> on_run;      // called once the run is registered
  std::function<void(const std::string&)> log;
};

struct PruneRunResult {
  std::int64_t run_id = -1;
  std::string checkpoint;
  PruneResult prune;
};

PruneRunResult run_pruning(const PruneRunOptions& o);

}  // namespace moxlab
