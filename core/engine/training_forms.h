// The forms a training pass (with autograd) computes in under a run's execution.form: its products x W^T
// and attention cores on the packed kernels (core/engine/packed_linear.h, training_attention.h; automatic
// and sparse), its loss on the fused cross-entropy (training_loss.h) and its blocks in the kinds'
// training forms (automatic: MoHD's block-sparse form where the layout is grouped; sparse: also MoH's
// head-gathered form); reference: LibTorch's products and every module's own forward. The trainer's
// objectives and `bench train` both take them from here, so the benchmark times what training runs.
#pragma once
#include "core/engine/form.h"
#include "core/model/block.h"
#include "core/model/model_options.h"

namespace moxlab {

struct TrainingForms {
  ModuleForms layers;  // one per block
  OpForms ops;         // empty: LibTorch's
  bool fused_loss = false;  // the language-modelling loss on the fused kernel (core/engine/training_loss.h)
  // The options of a pass in these forms (kept alive by this object).
  PassOptions pass(bool gates_off = false) const { return {gates_off, &layers, ops}; }
  // Transformer::lm_loss in these forms.
  torch::Tensor lm_loss(const torch::Tensor& logits, const torch::Tensor& targets) const;
};

// The training forms of `blocks` (a Transformer's or a VisionTransformer's).
TrainingForms training_forms(torch::nn::ModuleList& blocks, const ModelOptions& o, Form form);

}  // namespace moxlab
