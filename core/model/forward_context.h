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
struct KvCache;     // core/model/kv_cache.h

// Which form the method modules compute in. Reference: the dense-compute forms the paper equations are
// written in (masks and zero gates); sparse: the gathered kernels of kernels/sparse, which skip what a
// token does not use and equal the reference to rounding (gradients included). Automatic: the sparse
// form without a tap recorder where the module's rule says it wins, for inference and for training
// separately (each module states its rule), reference otherwise (taps need the reference form's tensors;
// docs/decisions/2026-11-25-sparse-forms-and-model-kernels.md has the measurements behind these defaults).
enum class Kernels { automatic, reference, sparse };
// "automatic" | "reference" | "sparse" (model.kernels; the config checks the name).
inline Kernels kernels_from_name(const std::string& name) {
  return name == "reference" ? Kernels::reference : name == "sparse" ? Kernels::sparse : Kernels::automatic;
}

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
  Kernels kernels = Kernels::automatic;
  // Keys and values of earlier positions (incremental decoding); null: the tokens are the whole sequence.
  KvCache* kv_cache = nullptr;
  // Only the last position's logits ([B, 1, vocab]): a prompt's forward before generation needs no
  // others, and the output head is a large share of a small model's FLOPs.
  bool last_logits_only = false;

  // Whether a module computes its sparse form. The module's own rule says where that is faster: for
  // inference (no autograd) and for training; recorded taps always take the reference form.
  bool sparse_kernels(bool wins_inference, bool wins_training) const {
    if (kernels == Kernels::sparse) return true;
    if (kernels != Kernels::automatic || tap_recorder != nullptr) return false;
    return torch::GradMode::is_enabled() ? wins_training : wins_inference;
  }

  void tap(const std::string& name, const torch::Tensor& t) {
    if (tap_recorder && tap_recorder->wants(name)) tap_recorder->record(name, t);
  }
  torch::Tensor total_aux_loss() const;
};

}  // namespace moxlab
