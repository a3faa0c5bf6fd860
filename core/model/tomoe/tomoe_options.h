// Options of ToMoE ("Converting Dense LLMs to MoE through Dynamic Structural Pruning"), torch-free; bound to the TOML keys "tomoe.*" in
// core/config/config.cpp. Defaults are the paper's (section 4 "Implementations", App. A, C) and the
// official code's (NOTES.md).
#pragma once
#include <string>

namespace moxlab {

struct TomoeOptions {
  int experts = 8;          // N MLP experts per layer (paper default 8)
  double tau = 0.4;         // Gumbel temperature of Eq. 14-15
  double offset = 3.0;      // Gumbel-Sigmoid offset b of Eq. 15: every channel starts kept
  int hypernet_input = 32;  // size of each fixed random hypernetwork input z (Eq. 1, App. A.1)
  int hypernet_hidden = 64; // GRU hidden size per direction; the expert embedding d_e is twice this
  double active = 0.5;      // p of Eq. 8: the target ratio of active to total parameters
  double alpha = 16.0;      // Eq. 10 weight of the parameter regulariser R_P
  double beta = 2.0;        // Eq. 10 weight of the union regulariser R_U
  double gamma = 1.0;       // Eq. 10 weight of the load-balance regulariser R_L
  // How the v/o mask's K is set after training (section 3.3 / 3.5):
  //   "widest": the official code's rule — the widest token's kept count in each calibration batch, with the
  //             training-time Gumbel noise, averaged over batches. It is the width Eq. 8 penalised during
  //             training, so the converted model's active ratio lands at the target p.
  //   "mean":   the paper's text, K = round(mean over tokens of the kept count) of the noise-free masks. The
  //             regulariser only bounded the widest token, so the model ends far below p (measured).
  std::string vo_top_k = "widest";

  int embedding() const { return 2 * hypernet_hidden; }
};

}  // namespace moxlab
