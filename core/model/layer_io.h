// What one block's attention or FFN reads besides its input and returns besides its output, for the one
// method whose state crosses layers: ToMoE's expert embeddings come in (the Transformer's hypernetwork,
// Eq. 1, computes every layer's at once) and its masks go out (its regularisers, Eq. 10, need every
// layer's at once). Other kinds ignore it.
#pragma once
#include <torch/torch.h>

#include "core/model/tomoe/tomoe_trace.h"

namespace moxlab {

struct LayerIO {
  bool gates_off = false;  // in: every gate off, the dense model (ToMoE's self-distillation teacher)
  int layer = 0;
  // in (ToMoE models): this pass's expert embeddings of every layer, E [L, N, d_e]; a module reads its own
  // layer's, E_l, where it uses them (so the autograd graph, hence its gradient sums, is built in the
  // order the layers run).
  torch::Tensor tomoe_embeddings;
  TomoeAttentionTrace tomoe_attention;  // out: S_0 and S_t (ToMoE attention)
  TomoeMlpTrace tomoe_mlp;              // out: route, router probabilities, expert masks (ToMoE FFN)
};

}  // namespace moxlab
