// The static pruning baselines of ToMoE's tables, one entry point: a dense model pruned in place to a
// target ratio of active parameters (ToMoE Eq. 8's accounting over the attention and SwiGLU matrices),
// calibrated on the same token windows.
//   magnitude, wanda, taylor: width pruning (width_pruning.h) at `active` of every structure;
//   shortgpt:                 whole blocks by block influence (layer_pruning.h);
//   wanda_2_4:                2:4 semi-structured Wanda (semi_structured.h); exactly 50%, so active must be 0.5;
//   none:                     nothing (active 1): the dense start as a run, evaluated like the others.
#pragma once
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/model/transformer.h"

namespace moxlab {

const std::vector<std::string>& prune_methods();

struct PruneResult {
  double active_ratio = 0;  // T(kept) / T_total actually reached
  std::string detail;       // what was removed, for the log
};

// calibration: token windows [B, T + 1] (int64) from the training split.
PruneResult prune_model(Transformer& model, const std::string& method, double active,
                        const std::vector<torch::Tensor>& calibration);

}  // namespace moxlab
