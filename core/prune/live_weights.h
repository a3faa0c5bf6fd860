// The attention and SwiGLU matrix weights of a (pruned) dense model that can still change its output,
// read from the weights alone: whatever the pruning method, a weight counts when it is non-zero and the
// structure it belongs to is live. A structure is dead when a factor it is multiplied by is all zero:
//   SwiGLU channel j:       W_G row j, W_U row j and W_D column j (silu(0) * u = 0, g * 0 = 0, 0 * h = 0);
//   value/output dim (h,d): W_V row (kv(h), d) and W_O column (h, d);
//   query/key RoPE pair p:  W_Q rows of the pair in head h and W_K rows of the pair in kv(h), and only in
//                           a head with a live output dimension (its scores reach nothing otherwise).
// This is ToMoE Eq. 8's accounting for width pruning (the zeroed rows and columns) and for ShortGPT (a
// removed block's W_O and W_D are zero, so its W_Q/W_K/W_V/W_G/W_U are dead too). For 2:4 it is the
// zeros plus any structure they kill: where one input of W_O or W_D is pruned in every row, the W_V row
// or SwiGLU channel feeding it is dead too, so the count can fall below one half. Prune runs and
// the train.keep_pruned tuning of their checkpoints both report params/active this way.
#pragma once
#include <cstdint>

#include "core/model/transformer.h"

namespace moxlab {

struct MatrixWeights {
  std::int64_t live = 0;   // non-zero weights of live structures
  std::int64_t total = 0;  // every weight of the seven matrices
  std::int64_t dead() const { return total - live; }
};

// Every block must have dense attention and a SwiGLU FFN (an Error otherwise). Biases count as part of
// their row: a zero row with a non-zero bias is live.
MatrixWeights live_matrix_weights(Transformer& model);

}  // namespace moxlab
