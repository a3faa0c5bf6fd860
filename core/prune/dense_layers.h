// The dense attention and SwiGLU modules of a decoder block, for the pruning code that edits or reads
// their weights; an Error names the layer kind the model has instead.
#pragma once
#include "core/common/error.h"
#include "core/model/transformer.h"

namespace moxlab {

inline SwiGLU& dense_swiglu(Transformer& m, int layer) {
  auto* f = dynamic_cast<SwiGLU*>(m.blocks->ptr<BlockImpl>(layer)->ffn.get());
  require(f != nullptr, "pruning needs SwiGLU FFNs (a dense model)");
  return *f;
}

inline DenseAttention& dense_attention(Transformer& m, int layer) {
  auto* a = dynamic_cast<DenseAttention*>(m.blocks->ptr<BlockImpl>(layer)->attn.get());
  require(a != nullptr, "pruning needs dense attention");
  return *a;
}

}  // namespace moxlab
