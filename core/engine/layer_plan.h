// One block's attention or FFN as the engine runs it without autograd: a plan per layer, built once for a
// model's module (core/engine/plan_kinds.h picks the plan of each kind) and holding what it derives from
// the module's weights (packed matrices, re-derived when a weight changes in place).
#pragma once
#include <torch/torch.h>

#include "core/engine/form.h"
#include "core/engine/kv_cache.h"
#include "core/model/analysis.h"
#include "core/model/layer_io.h"
#include "core/model/rope.h"
#include "core/model/tap_recorder.h"

namespace moxlab::engine {

// What one layer's step reads besides its input.
struct Step {
  const Rope& rope;
  Analysis& an;  // taps, auxiliary losses
  const BlockTapNames& taps;
  LayerIO& io;   // ToMoE's expert embeddings in, its masks out
  KvCache* cache = nullptr;  // keys and values of earlier positions; null: the tokens are the whole sequence
  Form form = Form::automatic;  // resolved against execution.form: automatic means "where it wins"

  // Whether a module computes its sparse form: forced, or automatic where the module's rule says it wins
  // (recorded taps take the reference form: taps record the reference form's tensors).
  bool sparse(bool wins) const {
    if (form == Form::sparse) return true;
    if (form != Form::automatic || an.tap_recorder != nullptr) return false;
    return wins;
  }
};

class AttentionPlan {
 public:
  virtual ~AttentionPlan() = default;
  // x [B, T, dim], normalised -> [B, T, dim] (after the output projection).
  virtual torch::Tensor forward(const torch::Tensor& x, Step& step) = 0;
};

class FeedForwardPlan {
 public:
  virtual ~FeedForwardPlan() = default;
  virtual torch::Tensor forward(const torch::Tensor& x, Step& step) = 0;
};

}  // namespace moxlab::engine
