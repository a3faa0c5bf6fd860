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

struct TomoeTrace;  // core/model/tomoe/tomoe_trace.h
struct KvCache;     // core/model/kv_cache.h

// Which form the method modules compute in. Reference: the dense-compute forms the paper equations are
// written in (masks and zero gates); sparse: the gathered kernels of kernels/sparse, which skip what a
// token does not use and equal the reference to rounding. Automatic: sparse for inference (no autograd)
// without probes where the module's sparse form wins (each module states its rule), reference otherwise
// (probe taps and training take the reference form; docs/performance.md has the measurements behind
// these defaults).
enum class Kernels { automatic, reference, sparse };

struct ForwardContext {
  ProbeRecorder* probes = nullptr;
  std::vector<std::pair<std::string, torch::Tensor>> aux_losses;  // (name, scalar already weighted)
  // Diagnostics of this pass that are not losses (e.g. ToMoE's active-parameter ratio); the trainer logs
  // their means as "train/NAME".
  std::vector<std::pair<std::string, double>> stats;
  // The dense model inside a method model: every gate off (ToMoE's self-distillation teacher, Eq. 10).
  bool gates_off = false;
  // ToMoE's per-layer decisions of this pass. The Transformer sets one up when the caller passes none;
  // a caller that wants them after the pass (analyses) passes its own.
  TomoeTrace* tomoe = nullptr;
  Kernels kernels = Kernels::automatic;
  // Keys and values of earlier positions (incremental decoding); null: the tokens are the whole sequence.
  KvCache* kv_cache = nullptr;
  // Only the last position's logits ([B, 1, vocab]): a prompt's forward before generation needs no
  // others, and the output head is a large share of a small model's FLOPs.
  bool last_logits_only = false;

  // Whether a module computes its sparse form; `wins`: the module's own rule for when that is faster.
  bool sparse_kernels(bool wins = true) const {
    if (kernels == Kernels::sparse) return true;
    return wins && kernels == Kernels::automatic && probes == nullptr && !torch::GradMode::is_enabled();
  }

  void tap(const std::string& name, const torch::Tensor& t) {
    if (probes && probes->wants(name)) probes->record(name, t);
  }
  torch::Tensor total_aux_loss() const;
};

}  // namespace moxlab
