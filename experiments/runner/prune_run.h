// `moxlab prune METHOD --checkpoint P --active R` as a library call: the static baselines of ToMoE's
// tables (core/prune/prune.h) applied to a dense checkpoint, calibrated on training windows of the
// checkpoint's own data, saved as a new run (kind "prune") whose checkpoint `moxlab eval --run ID`
// evaluates like any other.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/prune/prune.h"

namespace moxlab {

struct PruneRunOptions {
  std::string checkpoint;
  std::string method;
  double active = 0.5;
  int calibration_batches = 8;  // windows of train.batch_size x (train.seq_len + 1) tokens each
  std::string store;            // "" = the checkpoint's run.store
  std::string variant;          // run.variant for tables ("" = METHOD_ACTIVE)
  int threads = 0;
  std::function<void(const std::string&)> log;
};

struct PruneRunResult {
  std::int64_t run_id = -1;
  std::string checkpoint;
  PruneResult prune;
};

PruneRunResult run_pruning(const PruneRunOptions& o);

}  // namespace moxlab
