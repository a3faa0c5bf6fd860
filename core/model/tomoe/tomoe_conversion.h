// The end of ToMoE's construction (section 3.5): once the routing modules are trained, each layer's
// expert channel masks and static q/k mask are frozen (buffers) and the per-token v/o mask becomes a
// top-K choice with K from calibration tokens (Eq. 5's inference form), so every token of a layer
// activates the same width. tomoe.conversion picks how (tomoe_options.h): the official code's frozen noisy
// draw and widest-token K, or the paper text's noise-free masks and mean-count K; tomoe.expert_widths
// whether every expert is then grown to the widest one's width (App. B). Reports the converted model's
// widths and active parameters.
#pragma once
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "core/model/param_count.h"
#include "core/model/transformer.h"

namespace moxlab {

struct TomoeConversion {
  std::vector<int> qk_width;      // per layer: kept q/k head dims (the static mask)
  std::vector<int> vo_top_k;      // per layer: K of the v/o top-K (head_dim where attention is dense)
  std::vector<int> mlp_width;     // per layer: widest expert's kept channels (d_mid where the FFN is dense)
  std::vector<int> mlp_min_width; // per layer: narrowest expert as trained (before tomoe.expert_widths)
  std::vector<std::vector<int>> expert_widths;  // [layer][expert]: kept channels as trained (Fig. 8's boxes)
  std::vector<double> mlp_union;  // per layer: share of SwiGLU channels some converted expert keeps (Fig. 5a)
  std::vector<double> vo_union;   // per layer: share of v/o head dims some calibration token keeps (Eq. 6)
  std::vector<double> expert_similarity;  // per layer: mean pairwise Jaccard of the converted experts (Fig. 9)
  std::vector<std::vector<double>> expert_jaccard;  // [layer][N x N row-major]: every pair's Jaccard (Fig. 9)
  double active_ratio = 0;        // T(d_MoE) / T_total (Eq. 8) of the converted model
  // Non-embedding parameters: total = the dense matrices, norms and inference routing (router, v/o mask
  // projection); active = the kept widths of the matrices (T(d_MoE)) plus the same norms and routing.
  // The hypernetwork is not counted: after construction its embeddings are constants.
  ParamCount params;
};

// model: a ToMoE Transformer; calibration: token batches [B, T] (int64). Sets the v/o top-K of every
// ToMoE attention layer and freezes the masks by the model's tomoe.conversion (the code rule draws Gumbel
// noise from torch's default generator), leaves the model in eval mode and returns the accounting.
// `pass` runs the model on a batch without autograd (an execution plan's forward; default the model's own);
// the conversion reads each pass's ToMoE trace from its Analysis.
using ForwardPass = std::function<void(const torch::Tensor& tokens, Analysis& an)>;
TomoeConversion convert_to_tomoe_moe(Transformer& model, const std::vector<torch::Tensor>& calibration, const ForwardPass& pass = {});

}  // namespace moxlab
