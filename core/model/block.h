// One pre-norm decoder block (LLaMA): h = x + Attn(RMSNorm(x)); y = h + FFN(RMSNorm(h)); with
// model.branch_scale, h = x + s_a Attn(..), y = h + s_f FFN(..) (a fixed buffer or a trained scalar).
// Taps: resid.mid = h, resid.out = y (attention and FFN tap their own insides).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/model/ffn.h"
#include "core/model/op_forms.h"
#include "core/model/rmsnorm.h"

namespace moxlab {

// Another computation of one block's attention or FFN with the module's signature, for a pass with
// autograd: the engine's sparse training forms (core/engine/training_forms.h). Empty: the module's forward.
struct LayerForms {
  std::function<torch::Tensor(const torch::Tensor& x, const Rope& rope, Analysis& an, const BlockTapNames& taps, LayerIO& io)> attention;
  std::function<torch::Tensor(const torch::Tensor& x, Analysis& an, const BlockTapNames& taps, LayerIO& io)> ffn;
};
using ModuleForms = std::vector<LayerForms>;  // one per layer

// How a pass computes, beyond the weights.
struct PassOptions {
  bool gates_off = false;  // the dense model inside a method model (ToMoE's self-distillation teacher, Eq. 10)
  // One per layer (optional): replaces blocks' attention or FFN computations (the engine's training forms).
  const ModuleForms* forms = nullptr;
  // The forms of the pass's products x W^T (the head's included) and attention cores (core/model/op_forms.h;
  // empty: LibTorch's).
  OpForms ops;
};

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(const ModelOptions& o, int layer);
  torch::Tensor forward(const torch::Tensor& x, const Rope& rope, Analysis& an, LayerIO& io, const LayerForms* forms = nullptr);
  ParamCount param_count() const;

  // The branch outputs times the block's scales (unchanged without model.branch_scale).
  torch::Tensor scale_attention(const torch::Tensor& out) const { return attn_scale.defined() ? out * attn_scale : out; }
  torch::Tensor scale_ffn(const torch::Tensor& out) const { return ffn_scale.defined() ? out * ffn_scale : out; }

  RMSNorm attn_norm{nullptr}, ffn_norm{nullptr};
  torch::Tensor attn_scale, ffn_scale;  // [1]: model.branch_scale fixed (buffers) or learned (parameters); else undefined
  std::shared_ptr<Attention> attn;
  std::shared_ptr<FeedForward> ffn;
  const BlockTapNames taps;
};
TORCH_MODULE(Block);

}  // namespace moxlab
