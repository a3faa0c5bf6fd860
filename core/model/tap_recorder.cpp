#include "core/model/tap_recorder.h"

#include <fnmatch.h>

#include <sstream>

#include "core/model/analysis.h"

namespace moxlab {

BlockTapNames::BlockTapNames(int layer) {
  const std::string p = "blocks." + std::to_string(layer) + ".";
  attn_in = p + "attn.in"; attn_q = p + "attn.q"; attn_k = p + "attn.k"; attn_v = p + "attn.v";
  attn_ctx = p + "attn.ctx"; attn_out = p + "attn.out"; resid_mid = p + "resid.mid";
  ffn_in = p + "ffn.in"; ffn_gate = p + "ffn.gate"; ffn_up = p + "ffn.up"; ffn_act = p + "ffn.act";
  ffn_out = p + "ffn.out"; resid_out = p + "resid.out";
  attn_router_probs = p + "attn.router.probs"; attn_router_topk = p + "attn.router.topk";
  ffn_router_probs = p + "ffn.router.probs"; ffn_router_topk = p + "ffn.router.topk";
  ffn_expert = p + "ffn.expert";
}

std::vector<std::string> dense_tap_names(int n_layers) {
  std::vector<std::string> out;
  for (int l = 0; l < n_layers; ++l) {
    BlockTapNames n(l);
    for (const auto* s : {&n.attn_in, &n.attn_q, &n.attn_k, &n.attn_v, &n.attn_ctx, &n.attn_out, &n.resid_mid,
                          &n.ffn_in, &n.ffn_gate, &n.ffn_up, &n.ffn_act, &n.ffn_out, &n.resid_out})
      out.push_back(*s);
  }
  return out;
}

bool tap_selected(const std::string& globs, const std::string& name) {
  std::stringstream ss(globs);
  std::string g;
  while (std::getline(ss, g, ',')) {
    auto b = g.find_first_not_of(" \t");
    auto e = g.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    g = g.substr(b, e - b + 1);
    if (fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

bool TapRecorder::wants(const std::string& name) {
  auto it = decided_.find(name);
  if (it != decided_.end()) return it->second;
  bool yes = tap_selected(globs_, name);
  decided_.emplace(name, yes);
  return yes;
}

void TapRecorder::record(const std::string& name, const torch::Tensor& t) {
  torch::NoGradGuard ng;
  auto x = t.detach().to(torch::kCPU, torch::kFloat32);
  if (x.dim() > 3) x = x.flatten(2);  // [B, T, heads, head_dim] → [B, T, heads*head_dim]
  if (x.dim() == 2) x = x.unsqueeze(-1);
  recorded_[name] = x.contiguous().clone();
}

std::map<std::string, torch::Tensor> TapRecorder::take() {
  std::map<std::string, torch::Tensor> out;
  out.swap(recorded_);
  return out;
}

torch::Tensor Analysis::total_aux_loss() const {
  torch::Tensor sum;
  for (const auto& [name, loss] : aux_losses) sum = sum.defined() ? sum + loss : loss;
  return sum;
}

}  // namespace moxlab
