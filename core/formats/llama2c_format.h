// The llama2.c model file (Karpathy's format, e.g. stories260K.bin), read and checked without LibTorch.
// Layout: 7 int32 header (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size — negative means
// an unshared classifier — , seq_len), then float32 tensors in this order: token embedding [V, d],
// attention RMSNorm weights [L, d], wq [L, d, d], wk [L, kv, d], wv [L, kv, d], wo [L, d, d],
// FFN RMSNorm weights [L, d], w1 [L, h, d], w2 [L, d, h], w3 [L, h, d], final RMSNorm [d],
// two legacy RoPE tables [seq, head_dim/2] each (ignored: RoPE is recomputed), classifier [V, d] if unshared.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"

namespace moxlab {

struct Llama2cTensor {
  std::string name;                 // llama2.c's name (run.c): token_embedding_table, wq, w1, wcls, ...
  std::vector<std::int64_t> shape;  // per-layer weights are stacked: [L, ...]
  bool per_layer = false;
  std::uint64_t offset = 0;         // byte offset in the file of its first float32
};

struct Llama2cModel {
  Config config;                       // the model options of the header; run kind "import"
  std::vector<Llama2cTensor> tensors;  // in file order, without the legacy RoPE tables
  const Llama2cTensor& tensor(const std::string& name) const;
};

// Checks a whole llama2.c file held in memory before anything is built from it: every header field in
// its config key's range (the schema's, as for a TOML file) and the cross-key rules of validate(), the
// file size equal to exactly what the header implies (64-bit, overflow-checked), and every weight
// finite. Throws Error naming the file and the problem.
Llama2cModel parse_llama2c(std::string_view file, const std::string& path);

}  // namespace moxlab
