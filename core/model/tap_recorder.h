// Named activation taps (contract in DESIGN.md, stable across model kinds):
//   blocks.{l}.attn.in|q|k|v|ctx|out, blocks.{l}.resid.mid, blocks.{l}.ffn.in|gate|up|act|out,
//   blocks.{l}.resid.out, and routing taps blocks.{l}.attn.router.probs|topk, blocks.{l}.ffn.router.probs|topk,
//   blocks.{l}.ffn.expert.
// A TapRecorder selects taps by comma-separated globs ("blocks.*.ffn.out,blocks.0.attn.*") and keeps
// detached float32 copies shaped [batch, tokens, features] until taken.
#pragma once
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/torch.h>

namespace moxlab {

// Per-block tap names, built once so the forward pass never formats strings.
struct BlockTapNames {
  explicit BlockTapNames(int layer);
  std::string attn_in, attn_q, attn_k, attn_v, attn_ctx, attn_out, resid_mid;
  std::string ffn_in, ffn_gate, ffn_up, ffn_act, ffn_out, resid_out;
  std::string attn_router_probs, attn_router_topk, ffn_router_probs, ffn_router_topk, ffn_expert;
};

// Every tap name a dense model with n_layers blocks exposes, in forward order.
std::vector<std::string> dense_tap_names(int n_layers);

// True when name matches one of the comma-separated globs (fnmatch; '*' also crosses dots).
bool tap_selected(const std::string& globs, const std::string& name);

class TapRecorder {
 public:
  explicit TapRecorder(std::string globs) : globs_(std::move(globs)) {}
  bool wants(const std::string& name);
  void record(const std::string& name, const torch::Tensor& t);
  // Recorded tensors by name, [B, T, F] float32 on CPU; clears the recorder.
  std::map<std::string, torch::Tensor> take();

 private:
  std::string globs_;
  std::unordered_map<std::string, bool> decided_;
  std::map<std::string, torch::Tensor> recorded_;
};

}  // namespace moxlab
