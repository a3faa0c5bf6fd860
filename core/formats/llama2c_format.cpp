#include "core/formats/llama2c_format.h"

#include <algorithm>
#include <cstring>

#include "core/common/error.h"
#include "core/config/config_key.h"
#include "core/formats/checked_math.h"
#include "core/formats/float_encoding.h"

namespace moxlab {

namespace {

constexpr std::size_t kHeaderBytes = 7 * sizeof(std::int32_t);
const char* const kFieldNames[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};

std::string header_summary(const std::int32_t (&h)[7]) {
  std::string s = "(";
  for (int i = 0; i < 7; ++i) s += std::string(i ? ", " : "") + kFieldNames[i] + " " + std::to_string(h[i]);
  return s + ")";
}

// The model options a header describes, each set through the config schema (ranges checked).
Config header_config(const std::int32_t (&h)[7]) {
  require(h[1] != 0, "hidden_dim is 0");
  require(h[5] != 0, "vocab_size is 0");
  const std::int64_t vocab = h[5] > 0 ? std::int64_t{h[5]} : -std::int64_t{h[5]};
  Config cfg;
  cfg.run.name = "import-llama2c";
  cfg.run.kind = "import";
  set_config_key(cfg, "model.dim", std::int64_t{h[0]}, "dim");
  set_config_key(cfg, "model.ffn_hidden", std::int64_t{h[1]}, "hidden_dim");
  set_config_key(cfg, "model.n_layers", std::int64_t{h[2]}, "n_layers");
  set_config_key(cfg, "model.n_heads", std::int64_t{h[3]}, "n_heads");
  set_config_key(cfg, "model.n_kv_heads", std::int64_t{h[4]}, "n_kv_heads");
  set_config_key(cfg, "model.vocab_size", vocab, "vocab_size");
  set_config_key(cfg, "model.max_seq_len", std::int64_t{h[6]}, "seq_len");
  cfg.model.tie_embeddings = h[5] > 0;
  cfg.model.norm_eps = 1e-5;
  cfg.model.rope_theta = 10000.0;
  cfg.train.seq_len = std::min(cfg.train.seq_len, cfg.model.max_seq_len);
  validate(cfg);
  return cfg;
}

}  // namespace

const Llama2cTensor& Llama2cModel::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return t;
  throw Error("llama2.c model has no tensor " + name);
}

Llama2cModel parse_llama2c(std::string_view file, const std::string& path) {
  const std::string bad = "llama2.c file " + path;
  require(file.size() >= kHeaderBytes, bad + " is too short for its header (" + std::to_string(file.size()) + " bytes)");
  std::int32_t h[7];
  std::memcpy(h, file.data(), sizeof(h));
  Llama2cModel out;
  try {
    out.config = header_config(h);
  } catch (const Error& e) {
    throw Error(bad + " has an invalid header " + header_summary(h) + ": " + e.what());
  }
  const ModelOptions& m = out.config.model;
  const std::int64_t d = m.dim, hidden = m.ffn_hidden, L = m.n_layers, V = m.vocab_size, seq = m.max_seq_len;
  const std::int64_t hd = m.head_dim(), kv_dim = m.n_kv_heads * hd;

  // The ranges keep every size far below 2^63; the checks are for the day a range is widened.
  const std::string overflow = bad + " has an invalid header " + header_summary(h);
  std::uint64_t pos = kHeaderBytes;
  enum Kind { whole, per_layer, ignored };
  auto place = [&](const std::string& name, std::vector<std::int64_t> shape, Kind kind = whole) {
    if (kind == per_layer) shape.insert(shape.begin(), L);
    std::uint64_t n = 1;
    for (auto s : shape) n = checked_mul(n, static_cast<std::uint64_t>(s), overflow);
    if (kind != ignored) out.tensors.push_back({name, shape, kind == per_layer, pos});
    pos = checked_add(pos, checked_mul(n, sizeof(float), overflow), overflow);
  };
  place("token_embedding_table", {V, d});
  place("rms_att_weight", {d}, per_layer);
  place("wq", {d, d}, per_layer);
  place("wk", {kv_dim, d}, per_layer);
  place("wv", {kv_dim, d}, per_layer);
  place("wo", {d, d}, per_layer);
  place("rms_ffn_weight", {d}, per_layer);
  place("w1", {hidden, d}, per_layer);
  place("w2", {d, hidden}, per_layer);
  place("w3", {hidden, d}, per_layer);
  place("rms_final_weight", {d});
  place("freq_cis_real", {seq, hd / 2}, ignored);
  place("freq_cis_imag", {seq, hd / 2}, ignored);
  if (!m.tie_embeddings) place("wcls", {V, d});

  const std::string sizes = header_summary(h) + " implies " + std::to_string(pos) + " bytes, the file has " +
                            std::to_string(file.size());
  require(file.size() >= pos, bad + " is truncated: its header " + sizes);
  require(file.size() == pos, bad + " does not match its header: " + sizes + " (extra or inserted bytes)");

  for (const auto& t : out.tensors) {
    // Per layer, so that the message names the layer.
    const std::int64_t slices = t.per_layer ? L : 1;
    std::uint64_t slice_bytes = sizeof(float);
    for (std::size_t i = t.per_layer ? 1 : 0; i < t.shape.size(); ++i) slice_bytes *= static_cast<std::uint64_t>(t.shape[i]);
    for (std::int64_t l = 0; l < slices; ++l)
      require_finite(file.substr(t.offset + static_cast<std::uint64_t>(l) * slice_bytes, slice_bytes), FloatEncoding::f32,
                     bad + ": tensor " + t.name + (t.per_layer ? " of layer " + std::to_string(l) : ""));
  }
  return out;
}

}  // namespace moxlab
