// Tiny weight files written by hand, independently of moxlab's readers and writers, for the tests of
// the weight loaders: a llama2.c model file and an HF LLaMA checkpoint (config.json and
// model.safetensors) of one 2-layer model. Each comes with the byte offset of every tensor, so a test
// can plant a NaN in a named weight or cut the file at a tensor boundary.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace moxlab::testing {

struct TinyShape {
  int dim = 8, hidden = 16, layers = 2, heads = 2, kv_heads = 1, vocab = 32, seq = 8;
  int head_dim() const { return dim / heads; }
};

struct TinyFile {
  std::string bytes;
  std::map<std::string, std::size_t> offset;  // tensor name -> byte offset of its first element
};

namespace detail {
// Small, distinct, finite float32 values (no RNG: the same bytes everywhere).
inline void append_floats(TinyFile& f, const std::string& name, std::int64_t count) {
  f.offset[name] = f.bytes.size();
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = static_cast<float>((i * 37 + static_cast<std::int64_t>(name.size()) * 11) % 101 - 50) / 200.0f;
    char b[4];
    std::memcpy(b, &v, 4);
    f.bytes.append(b, 4);
  }
}
}  // namespace detail

// llama2.c layout: 7 int32 (dim, hidden, layers, heads, kv_heads, vocab (negative: unshared classifier),
// seq), then float32 tensors in the format's order, stacked over layers; names as in llama2.c's run.c.
inline TinyFile tiny_llama2c(const TinyShape& s = {}, bool shared_classifier = true) {
  TinyFile f;
  const std::int32_t header[7] = {s.dim, s.hidden, s.layers, s.heads, s.kv_heads,
                                  shared_classifier ? s.vocab : -s.vocab, s.seq};
  f.bytes.assign(reinterpret_cast<const char*>(header), sizeof(header));
  const std::int64_t d = s.dim, h = s.hidden, L = s.layers, kv = s.kv_heads * s.head_dim(), V = s.vocab;
  detail::append_floats(f, "token_embedding_table", V * d);
  detail::append_floats(f, "rms_att_weight", L * d);
  detail::append_floats(f, "wq", L * d * d);
  detail::append_floats(f, "wk", L * kv * d);
  detail::append_floats(f, "wv", L * kv * d);
  detail::append_floats(f, "wo", L * d * d);
  detail::append_floats(f, "rms_ffn_weight", L * d);
  detail::append_floats(f, "w1", L * h * d);
  detail::append_floats(f, "w2", L * d * h);
  detail::append_floats(f, "w3", L * h * d);
  detail::append_floats(f, "rms_final_weight", d);
  detail::append_floats(f, "freq_cis_real", static_cast<std::int64_t>(s.seq) * s.head_dim() / 2);
  detail::append_floats(f, "freq_cis_imag", static_cast<std::int64_t>(s.seq) * s.head_dim() / 2);
  if (!shared_classifier) detail::append_floats(f, "wcls", V * d);
  return f;
}

// config.json of the tiny model as transformers writes it for LlamaForCausalLM (tied embeddings).
inline std::string tiny_hf_config(const TinyShape& s = {}) {
  nlohmann::json j = {{"architectures", {"LlamaForCausalLM"}},
                      {"model_type", "llama"},
                      {"hidden_size", s.dim},
                      {"intermediate_size", s.hidden},
                      {"num_attention_heads", s.heads},
                      {"num_key_value_heads", s.kv_heads},
                      {"num_hidden_layers", s.layers},
                      {"rms_norm_eps", 1e-5},
                      {"rope_theta", 10000.0},
                      {"vocab_size", s.vocab},
                      {"max_position_embeddings", s.seq},
                      {"tie_word_embeddings", true},
                      {"hidden_act", "silu"}};
  return j.dump(2);
}

// model.safetensors of the tiny model: F32 tensors in name order, header padded to 8 bytes.
// offset[] holds absolute file offsets.
inline TinyFile tiny_hf_safetensors(const TinyShape& s = {}) {
  const std::int64_t d = s.dim, h = s.hidden, kv = s.kv_heads * s.head_dim(), V = s.vocab;
  std::map<std::string, std::vector<std::int64_t>> shapes = {{"model.embed_tokens.weight", {V, d}},
                                                             {"model.norm.weight", {d}}};
  for (int l = 0; l < s.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    shapes[p + "self_attn.q_proj.weight"] = {d, d};
    shapes[p + "self_attn.k_proj.weight"] = {kv, d};
    shapes[p + "self_attn.v_proj.weight"] = {kv, d};
    shapes[p + "self_attn.o_proj.weight"] = {d, d};
    shapes[p + "mlp.gate_proj.weight"] = {h, d};
    shapes[p + "mlp.up_proj.weight"] = {h, d};
    shapes[p + "mlp.down_proj.weight"] = {d, h};
    shapes[p + "input_layernorm.weight"] = {d};
    shapes[p + "post_attention_layernorm.weight"] = {d};
  }
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
  TinyFile data;
  for (const auto& [name, shape] : shapes) {
    std::int64_t n = 1;
    for (auto x : shape) n *= x;
    const std::size_t begin = data.bytes.size();
    detail::append_floats(data, name, n);
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, data.bytes.size()}}};
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  TinyFile f;
  f.bytes.resize(8);
  for (int i = 0; i < 8; ++i) f.bytes[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  f.bytes += json;
  for (const auto& [name, off] : data.offset) f.offset[name] = f.bytes.size() + off;
  f.bytes += data.bytes;
  return f;
}

// Overwrites element `index` (float32) of the tensor that starts at byte `offset` with a NaN or an Inf.
inline void plant_float(std::string& bytes, std::size_t offset, std::size_t index, float value) {
  std::memcpy(&bytes[offset + 4 * index], &value, 4);
}

}  // namespace moxlab::testing
