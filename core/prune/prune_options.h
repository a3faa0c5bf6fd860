// Options of a pruning-baseline run (torch-free; TOML keys "prune.*"): a sweep member whose
// prune.method is set prunes its train.init_from checkpoint instead of training (experiments/runner/
// prune_run.h), so ToMoE's baselines run through `moxlab sweep` like every other member.
#pragma once
#include <string>

namespace moxlab {

struct PruneOptions {
  std::string method;    // "" = not a pruning run | none (the dense start itself, evaluated the same way)
                         // | magnitude | wanda | taylor | shortgpt | wanda_2_4 (core/prune/prune.h)
  double active = 0.5;   // target ratio of active attention/SwiGLU parameters
  int calibration = 8;   // calibration batches (train.batch_size windows of train.seq_len + 1 tokens)
};

}  // namespace moxlab
