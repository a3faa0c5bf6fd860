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
  // R_L's form. "official": sum_i F_i P_i with P_i the mean of the straight-through one-hot routes (the
  // official code; 1/N when balanced, the level of the paper's Fig. 3, ~0.15 at N = 8). "paper": Eq. 9 as
  // printed, N sum_i F_i P_i with P_i the mean router softmax: N times stronger at the same gamma.
  std::string load_balance = "official";
  // Gumbel noise of the channel masks while training. "token" (Eq. 3; the official code): every token
  // draws its own noise for its expert's MLP mask and for the static q/k mask. "expert": one draw per
  // expert (MLP) and one for the q/k mask per pass, shared by the batch's tokens (cheaper; same expected
  // forward value, different gradient variance and widest-token statistics). "none": no noise at all, the
  // routes and masks are the deterministic straight-through decisions (an ablation; and what makes a
  // data-parallel run step exactly as one process, whose noise the ranks cannot share).
  std::string mask_noise = "token";
  // Fewest q/k rotation pairs a layer keeps when its q/k mask freezes: 1 (the official code keeps the
  // highest-scoring pair when none passes) or 0 (a layer may keep none: uniform causal attention).
  int min_qk_pairs = 1;
  // How the trained gates become the converted MoE (section 3.5; tomoe_conversion.h):
  //   "code":  the official code's conversion — the expert channel masks and the static q/k mask are one
  //            draw of the straight-through gates *with* the training noise, frozen, and the v/o top-K is
  //            the widest token's kept count per calibration batch (noise on), averaged over batches. These
  //            are the widths Eq. 8 penalised during training, so the model lands near the target p.
  //   "paper": the noise-free masks (sigmoid > 1/2), frozen, and K = round(mean kept count over tokens)
  //            as section 3.3 writes it. Eq. 8 only bounded the noisy widest expert / token, so the model
  //            ends well below p (measured: docs/reproduction/tomoe.md).
  std::string conversion = "code";
  // The experts' widths in the converted MoE. "widest" (App. B, "we adjust the width of all experts to
  // match the maximum size among them"; the official code): every expert of a layer keeps the top-W
  // channels of its frozen draw's gate scores, W the widest expert's kept count, so each costs the same
  // and Eq. 8's budget (which counts the widest) is what every token uses. "own": each expert keeps its
  // own draw's channels (narrower experts compute less than the budget).
  std::string expert_widths = "widest";

  int embedding() const { return 2 * hypernet_hidden; }
};

}  // namespace moxlab
