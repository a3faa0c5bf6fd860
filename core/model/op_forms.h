// The model's heavy ops, as one switch: every product y = x W^T (+ b) (each torch::nn::Linear, the output
// head, ToMoE's masked FFN) goes through linear(), the attention core softmax(scale q k^T) v through
// attention_core(), each RMSNorm through rms_norm_op(), SwiGLU's SiLU(gate) * up through swiglu_op() and
// RoPE's rotation (Rope::apply) through rope_in_form(). A pass may compute them in other forms with the same math (the engine's packed
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
  // x [..., d], weight [d] -> RMSNorm; may return an undefined tensor for operands it does not take. Empty: rms_norm (rmsnorm.h).
  std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& weight, double eps)> rms_norm;
  // SiLU(gate) * up; may return an undefined tensor for operands it does not take. Empty: torch::silu(gate) * up.
  std::function<torch::Tensor(const torch::Tensor& gate, const torch::Tensor& up)> swiglu;
  // x [B, T, heads, d] rotated at positions start.. by cos / sin [positions, d / 2]; may return an undefined
  // tensor for operands it does not take. Empty: Rope::apply's torch ops (rope.h).
  std::function<torch::Tensor(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, std::int64_t start)> rope;
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
// The installed RMSNorm and SwiGLU activation forms where they take the operands, else LibTorch's.
torch::Tensor rms_norm_op(const torch::Tensor& x, const torch::Tensor& weight, double eps);
torch::Tensor swiglu_op(const torch::Tensor& gate, const torch::Tensor& up);
// The installed RoPE form's rotation of x, or an undefined tensor where none is installed or it does not
// take x (Rope::apply, which calls it, then rotates with torch ops).
torch::Tensor rope_in_form(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, std::int64_t start);

}  // namespace moxlab
