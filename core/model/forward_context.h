// What travels with one forward pass besides the activations: the tap recorder (the named points whose
// activations a capture records; null when nothing is captured, so disabled taps cost one pointer test) and auxiliary losses that
// method modules add (MoHD balance loss, MoH load balance, ToMoE regularisers).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "core/model/tap_recorder.h"

namespace moxlab {

struct TomoeTrace;  // core/model/tomoe/tomoe_trace.h

struct ForwardContext {
  TapRecorder* tap_recorder = nullptr;
  std::vector<std::pair<std::string, torch::Tensor>> aux_losses;  // (name, scalar already weighted)
  // Whether method modules add their auxiliary losses: passes whose losses nobody trains on (evaluation,
  // generation, benchmarks) skip computing them.
  bool aux_losses_wanted = true;
  // Diagnostics of this pass that are not losses (e.g. ToMoE's active-parameter ratio); the trainer logs
  // their means as "train/NAME".
  std::vector<std::pair<std::string, double>> stats;
  // The dense model inside a method model: every gate off (ToMoE's self-distillation teacher, Eq. 10).
  bool gates_off = false;
  // ToMoE's per-layer decisions of this pass. The Transformer sets one up when the caller passes none;
  // a caller that wants them after the pass (analyses) passes its own.
  TomoeTrace* tomoe = nullptr;

  void tap(const std::string& name, const torch::Tensor& t) {
    if (tap_recorder && tap_recorder->wants(name)) tap_recorder->record(name, t);
  }
  torch::Tensor total_aux_loss() const;
};

}  // namespace moxlab
