// Import of llama2.c model files (Karpathy's format, e.g. stories260K.bin) into moxlab's Transformer.
// Layout: 7 int32 header (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size — negative means
// an unshared classifier — , seq_len), then float32 tensors in this order: token embedding [V, d],
// attention RMSNorm weights [L, d], wq [L, d, d], wk [L, kv, d], wv [L, kv, d], wo [L, d, d],
// FFN RMSNorm weights [L, d], w1 [L, h, d], w2 [L, d, h], w3 [L, h, d], final RMSNorm [d],
// two legacy RoPE tables [seq, head_dim/2] each (skipped: RoPE is recomputed), classifier [V, d] if unshared.
// Its RoPE is the interleaved-pair convention moxlab uses, so no weight permutation is needed.
#pragma once
#include <memory>
#include <string>

#include "core/config/config.h"
#include "core/model/transformer.h"

namespace moxlab {

struct ImportedModel {
  Config config;
  std::shared_ptr<Transformer> model;
};

// Throws Error for a missing file, a bad header or a size that does not match the header.
ImportedModel import_llama2c(const std::string& model_path, const std::string& tokenizer_spec);

}  // namespace moxlab
