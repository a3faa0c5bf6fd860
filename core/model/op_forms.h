// The model's heavy ops, as one switch: every product y = x W^T (+ b) (each torch::nn::Linear, the output
// head, ToMoE's masked FFN) goes through linear(), and the attention core softmax(scale q k^T) v through
// attention_core(). A pass may compute them in other forms with the same math (the engine's packed
// products and training attention: core/engine/training_forms.h), handed to the model's forward in
// PassOptions::ops; the forward installs them for its thread with an OpFormsScope, as LibTorch's autocast
// scopes its own ops, so the modules' code reads the same in every form.
#pragma once
#include <functional>

#include <torch/torch.h>

namespace moxlab {

struct OpForms {
  // x [..., K], w [N, K], b [N] or undefined -> [..., N]. Empty: torch::linear.
  std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)> linear;
  // q [B, H, T, hq], k [B, Hkv, Tk, hq], v [B, Hkv, Tk, hd], causal, scale (0: 1 / sqrt(hq)) -> [B, H, T, hd];
  // may return an undefined tensor for operands it does not take. Empty: dot_product_attention_torch.
  std::function<torch::Tensor(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal, double scale)> attention;
};

// Installs `forms` for this thread's ops until destroyed (the previous ones back then); empty members keep
// the torch forms.
class OpFormsScope {
 public:
  explicit OpFormsScope(const OpForms& forms);
  ~OpFormsScope();
  OpFormsScope(const OpFormsScope&) = delete;
  OpFormsScope& operator=(const OpFormsScope&) = delete;

 private:
  const OpForms* previous_;
};

// Call it qualified (moxlab::linear) on tensors: argument lookup finds at::linear too.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b = {});
torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x);
// The installed attention form where it takes the operands, else dot_product_attention_torch (attention.h).
torch::Tensor attention_core(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool causal, double scale);

}  // namespace moxlab
