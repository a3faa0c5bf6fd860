// What travels with one forward pass besides the activations: the probe recorder (activation taps,
// null when nothing is captured, so disabled taps cost one pointer test) and auxiliary losses that
// method modules add (MoHD balance loss, MoH load balance, ToMoE regularisers).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "core/model/probe_recorder.h"

namespace moxlab {

struct ForwardContext {
  ProbeRecorder* probes = nullptr;
  std::vector<std::pair<std::string, torch::Tensor>> aux_losses;  // (name, scalar already weighted)

  void tap(const std::string& name, const torch::Tensor& t) {
    if (probes && probes->wants(name)) probes->record(name, t);
  }
  torch::Tensor total_aux_loss() const;
};

}  // namespace moxlab
