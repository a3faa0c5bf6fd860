// The forms a training pass (with autograd) computes its blocks in: the kinds' training forms under a
// run's execution.form (automatic: MoHD's block-sparse form where the layout is grouped; sparse: also
// MoH's head-gathered form; reference: every module's own forward). The trainer's objectives and
// `bench train` both take them from here, so the benchmark times what training runs.
#pragma once
#include "core/engine/form.h"
#include "core/model/block.h"
#include "core/model/model_options.h"

namespace moxlab {

// One LayerForms per block of `blocks` (a Transformer's or a VisionTransformer's).
ModuleForms training_forms(torch::nn::ModuleList& blocks, const ModelOptions& o, Form form);

}  // namespace moxlab
