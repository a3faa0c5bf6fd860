// What one forward pass reports besides its output: the activations of the taps a recorder asks for
// (null when nothing is captured, so disabled taps cost one pointer test), the auxiliary losses method
// modules add (MoHD balance loss, MoH load balance, ToMoE regularisers), diagnostics, and ToMoE's
// decisions. How the pass is computed (forms, KV cache, last position only) is not here: that is the
// engine's ExecOptions (core/engine/inference_plan.h).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "core/model/tap_recorder.h"
#include "core/model/tomoe/tomoe_trace.h"

namespace moxlab {

struct Analysis {
  TapRecorder* tap_recorder = nullptr;
  std::vector<std::pair<std::string, torch::Tensor>> aux_losses;  // (name, scalar already weighted)
  // Whether method modules add their auxiliary losses: passes whose losses nobody trains on (evaluation,
  // generation, benchmarks) skip computing them.
  bool aux_losses_wanted = true;
  // Diagnostics of this pass that are not losses (e.g. ToMoE's active-parameter ratio); the trainer logs
  // their means as "train/NAME".
  std::vector<std::pair<std::string, double>> stats;
  // ToMoE models with their gates on: this pass's expert embeddings and each layer's decisions, filled
  // once every block has run (conversion and export read them); empty otherwise.
  TomoeTrace tomoe;

  void tap(const std::string& name, const torch::Tensor& t) {
    if (tap_recorder && tap_recorder->wants(name)) tap_recorder->record(name, t);
  }
  torch::Tensor total_aux_loss() const;
};

}  // namespace moxlab
