// Options of Mixture-of-Head attention (MoH, arXiv 2410.11842), torch-free; bound to the TOML keys
// "moh.*" in core/config/config.cpp.
//
// Heads are experts (Eq. 4): every token uses the `shared` first heads (h_s) and the top K = active -
// shared of the remaining routed heads; head outputs are weighted by gates g before the output
// projection. Two routers (section 3.2 and 4.4):
//   learned:    g_i = alpha1 Softmax(W_s x)_i (shared), alpha2 Softmax(W_r x)_i (top-K routed), 0 otherwise
//               (Eq. 5), [alpha1, alpha2] = Softmax(W_h x) (Eq. 6).
//   query_norm: parameter-free (continue-tuning): routed heads scored by their query's L2 norm (before RoPE)
//               over the scores' std across routed heads, softmax, top-K; binary gates (Eq. 9) with a
//               straight-through gradient (Eq. 10): chosen heads keep their dense weighting, the others drop
//               out. Its balance loss reaches wq (balance_beta = 0 avoids that; see moh_attention.h).
#pragma once
#include <string>
#include <vector>

namespace moxlab {

struct MohOptions {
  int shared = 2;              // h_s: always-active heads; 0 = the "w/o shared heads" ablation
  int active = 6;              // heads per token, shared included (K = active - shared routed heads)
  std::vector<std::string> layer_active;  // per-layer head budgets ("4", "4", "6", ...); empty: `active` everywhere
  bool two_stage = true;       // Eq. 6; false ("w/o two-stage routing"): alpha1 = alpha2 = 1
  std::string router = "learned";  // "learned" (Eq. 5-6) | "query_norm" (section 4.4)
  bool quantised = false;      // binary gates with a straight-through estimator (Eq. 9-10); query_norm always
  std::string gate_form = "paper";  // "paper": Eq. 5-7 as written | "code": the official code's scaling
                                    // (routed top-K weights renormalised to 1 and times K, shared times h_s,
                                    // alphas times 2, balance loss times the routed head count)
  double balance_beta = 0.01;  // beta of Eq. 8 (the loss is averaged over layers, as in the official code)

  // The head budget of `layer` (validated by the config).
  int active_heads(int layer) const { return layer_active.empty() ? active : std::stoi(layer_active.at(layer)); }
};

}  // namespace moxlab
