// The tiny decoder the model tests build on: small enough to run in milliseconds, big enough for several
// layers, grouped-query heads (4 query heads on 2 key/value heads) and a multi-token context. A test sets
// only the fields its hand-computed values or kernels depend on.
#pragma once
#include "core/model/model_options.h"

namespace moxlab::test {

// dim and vocabulary as given, 2 layers, 4 heads on 2 KV heads, FFN 2 x dim, 16 positions.
inline ModelOptions tiny_model(int dim = 32, int vocab = 50) {
  ModelOptions o;
  o.vocab_size = vocab;
  o.dim = dim;
  o.n_layers = 2;
  o.n_heads = 4;
  o.n_kv_heads = 2;
  o.ffn_hidden = 2 * dim;
  o.max_seq_len = 16;
  return o;
}

}  // namespace moxlab::test
