// The engine's entry point for inference: every caller that runs a model without training it (generation,
// evaluation, zero-shot scoring, captures, a distillation teacher, ToMoE conversion, the inference
// benchmark) goes through a plan. The model (core/model) is the reference math; a plan runs the same
// formulas in its execution forms: packed weights, fused kernels, the KV cache, decode vs prefill splits,
// the sparse forms. A plan is built once per model (one plan per layer from core/engine/plan_kinds.h) and
// reads the weights as they are at each call: what it derives from them is re-derived when a weight
// changed in place (training, pruning, loading).
#pragma once
#include <functional>

#include <torch/torch.h>

#include "core/engine/block_plans.h"
#include "core/engine/derived_weights.h"
#include "core/engine/form.h"
#include "core/model/analysis.h"
#include "core/model/transformer.h"

namespace moxlab {

struct ExecOptions {
  Form form = Form::automatic;  // MoHD / MoH compute form (automatic: the plan's default form)
  KvCache* cache = nullptr;     // keys and values of earlier positions; null: the tokens are the whole sequence
  bool last_logits_only = false;  // only the last position's logits [B, 1, vocab] (a prompt before generation)
  bool gates_off = false;         // a method model with every gate off (ToMoE's dense teacher, Eq. 10)
};

class InferencePlan {
 public:
  // default_form: what ExecOptions' automatic means (a run's execution.form).
  explicit InferencePlan(Transformer& model, Form default_form = Form::automatic);

  // tokens [B, T] int64 -> logits [B, T, vocab] (or [B, 1, vocab]), without autograd. `analysis`, when
  // given, collects taps, auxiliary losses (if it wants them) and ToMoE's trace, as Transformer::forward's.
  torch::Tensor forward(const torch::Tensor& tokens, const ExecOptions& exec = {}, Analysis* analysis = nullptr);
  // One block's attention or FFN on normalised hidden states h [B, T, dim], without autograd (the
  // benchmark's per-layer timings).
  torch::Tensor attention(int layer, const torch::Tensor& h, Form form = Form::automatic);
  torch::Tensor feed_forward(int layer, const torch::Tensor& h, Form form = Form::automatic);

  const ModelOptions& options() const { return model_.options(); }
  Transformer& model() { return model_; }

 private:
  Form resolve(Form form) const;
  // One block's attention or FFN (`run`) as a pass of its own: no cache, its losses discarded.
  torch::Tensor one_layer(int layer, Form form, const std::function<torch::Tensor(engine::Step&)>& run);
  Transformer& model_;
  Form default_form_;
  engine::BlockPlans blocks_;
  DerivedWeights head_;  // the output head packed
};

}  // namespace moxlab
