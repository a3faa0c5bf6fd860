// Options of one MoHD component (attention or FFN of every layer), torch-free; bound to the TOML keys
// "mohd.attn.*" and "mohd.ffn.*" in core/config/config.cpp.
//
// The hidden dimension d is sliced into `sub_dims` (N) sub-dimensions of d/N; each token activates
// `active` of them (delta N): the first `shared` (phi N) always, plus the top (active - shared) of the
// rest by router score (Eq. 11-12).
#pragma once

namespace moxlab {

struct MohdOptions {
  int sub_dims = 8;          // N
  int active = 4;            // delta N: sub-dimensions a token uses (shared included)
  int shared = 3;            // phi N: always-active sub-dimensions; 0 = "w/o mixed sub-dims" ablation
  int fusion_groups = 8;     // Monarch group fusion (Eq. 9): blocks of the first factor; 0 = no fusion
  bool scaling = true;       // activation scaling alpha (Sec. 4.2); false = "w/o scaling" ablation
  // Which alpha: Sec. 4.2 writes alpha = sum(g) N, "so the sum of activation weights stays consistent with
  // the input". Read literally ("n_sum") an active block starts at about K/N weight (near-uniform routing),
  // below the dense level the same sentence aims at; "k_over_sum", alpha = K / sum(g) with K = active,
  // makes the active weights average 1. Both readings are implemented; results name theirs.
  std::string alpha = "n_sum";
  // Monarch fusion's starting point: "uniform" draws both factors like linear layers of their fan-in
  // (the fusion starts as a contraction, ~1/3 of the input's scale); "identity" starts at M = I, so the
  // fusion changes nothing until it learns to (a branch-scale control).
  std::string fusion_init = "uniform";
  double balance_beta = 0.01;  // weight of the sub-dimension balance loss (Eq. 13); 0 = off
};

}  // namespace moxlab
