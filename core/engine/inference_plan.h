// The engine's entry point for inference: every caller that runs a model without training it (generation,
// evaluation, zero-shot scoring, a distillation teacher, the inference benchmark) goes through a plan, so
// the execution forms (packed weights, KV cache, decode vs prefill, the sparse kernels) have one home
// apart from the model's math. A plan is built once per model and reads its weights as they are at each
// call (weights changed in place by training or pruning are seen by the next call).
//
// Today a plan runs the model's forward with the execution options below; the execution forms still
// live in the model modules and move into the engine step by step (docs/architecture.md, core/engine).
#pragma once
#include <torch/torch.h>

#include "core/model/forward_context.h"
#include "core/model/transformer.h"

namespace moxlab {

struct ExecOptions {
  Kernels form = Kernels::automatic;  // MoHD / MoH compute form (automatic: the model's model.kernels)
  KvCache* cache = nullptr;           // keys and values of earlier positions; null: the tokens are the whole sequence
  bool last_logits_only = false;      // only the last position's logits [B, 1, vocab] (a prompt before generation)
  bool gates_off = false;             // a method model with every gate off (ToMoE's dense teacher, Eq. 10)
};

class InferencePlan {
 public:
  explicit InferencePlan(Transformer& model) : model_(model) {}

  // tokens [B, T] int64 -> logits [B, T, vocab] (or [B, 1, vocab]), without autograd.
  torch::Tensor forward(const torch::Tensor& tokens, const ExecOptions& exec = {});
  // One block's attention or FFN on normalised hidden states h [B, T, dim], without autograd (the
  // benchmark's per-layer timings).
  torch::Tensor attention(int layer, const torch::Tensor& h, Kernels form = Kernels::automatic);
  torch::Tensor feed_forward(int layer, const torch::Tensor& h, Kernels form = Kernels::automatic);

  const ModelOptions& options() const { return model_.options(); }
  Transformer& model() { return model_; }

 private:
  Transformer& model_;
};

}  // namespace moxlab
