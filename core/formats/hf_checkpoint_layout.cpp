#include "core/formats/hf_checkpoint_layout.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/config/config_key.h"

namespace moxlab {

namespace {

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// A field's JSON for a message, cut short: a corrupted file can hold megabytes in one value.
std::string excerpt(const nlohmann::json& v) {
  const std::string s = v.dump();
  return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}

class ConfigFields {
 public:
  ConfigFields(const nlohmann::json& j, const std::string& path) : j_(j), path_(path) {}

  // An integer field, set through the config schema (range checked); `positive` refuses 0, which some
  // keys read as "automatic" but a checkpoint's sizes never mean.
  void set_int(Config& cfg, const char* field, const std::string& key, bool positive = true) const {
    auto it = j_.find(field);
    require(it != j_.end() && it->is_number_integer(), where() + " lacks integer " + field);
    if (it->is_number_unsigned())
      require(it->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
              where() + ": " + field + " = " + excerpt(*it) + " is out of range");
    const std::int64_t v = it->get<std::int64_t>();
    require(!positive || v > 0, where() + ": " + field + " must be positive, got " + std::to_string(v));
    set_config_key(cfg, key, v, std::string(field) + " in " + where());
  }

  void set_number(Config& cfg, const char* field, const std::string& key, double fallback) const {
    auto it = j_.find(field);
    double v = fallback;
    if (it != j_.end()) {
      require(it->is_number(), where() + ": " + field + " must be a number, got " + excerpt(*it));
      v = it->get<double>();
    }
    set_config_key(cfg, key, v, std::string(field) + " in " + where());
  }

  bool flag(const char* field, bool fallback) const {
    auto it = j_.find(field);
    if (it == j_.end() || it->is_null()) return fallback;
    require(it->is_boolean(), where() + ": " + field + " must be true or false, got " + excerpt(*it));
    return it->get<bool>();
  }

  std::string where() const { return "HF config " + path_; }

 private:
  const nlohmann::json& j_;
  const std::string& path_;
};

}  // namespace

HfConfig parse_hf_config(std::string_view text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception&) {
    throw Error("HF config " + path + " is not valid JSON");
  }
  require(j.is_object(), "HF config " + path + " is not a JSON object");
  const ConfigFields f(j, path);
  std::string arch = j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "(none)";
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string())
    arch = j["architectures"][0].get<std::string>();
  HfConfig out;
  if (arch == "LlamaForCausalLM" || arch == "llama") out.qwen = false;
  else if (arch == "Qwen2ForCausalLM" || arch == "qwen2") out.qwen = true;
  else throw Error("unknown HF architecture '" + arch.substr(0, 60) + "' in " + path + " (LlamaForCausalLM or Qwen2ForCausalLM)");

  // Variants whose computation moxlab's Transformer does not reproduce are refused, not approximated.
  require(!f.flag("attention_bias", false) || out.qwen, f.where() + ": attention_bias (o_proj bias) is not supported");
  require(!f.flag("mlp_bias", false), f.where() + ": mlp_bias is not supported");
  require(!j.contains("hidden_act") || j["hidden_act"] == "silu", f.where() + ": only hidden_act silu is supported");
  require(!j.contains("rope_scaling") || j["rope_scaling"].is_null(), f.where() + ": rope_scaling is not supported");
  require(!f.flag("use_sliding_window", false), f.where() + ": sliding-window attention is not supported");

  Config& cfg = out.config;
  cfg.run.name = "import-hf";
  cfg.run.kind = "import";
  f.set_int(cfg, "hidden_size", "model.dim");
  f.set_int(cfg, "intermediate_size", "model.ffn_hidden");
  f.set_int(cfg, "num_attention_heads", "model.n_heads");
  f.set_int(cfg, j.contains("num_key_value_heads") ? "num_key_value_heads" : "num_attention_heads", "model.n_kv_heads");
  f.set_int(cfg, "num_hidden_layers", "model.n_layers");
  f.set_int(cfg, "vocab_size", "model.vocab_size");
  f.set_int(cfg, "max_position_embeddings", "model.max_seq_len");
  f.set_number(cfg, "rms_norm_eps", "model.norm_eps", 1e-6);
  f.set_number(cfg, "rope_theta", "model.rope_theta", 10000.0);
  ModelOptions& m = cfg.model;
  m.tie_embeddings = f.flag("tie_word_embeddings", false);  // transformers' default for both classes
  m.qkv_bias = out.qwen;
  require(m.dim % m.n_heads == 0 && (m.dim / m.n_heads) % 2 == 0,
          f.where() + ": hidden_size must split into num_attention_heads heads of even size");
  require(!j.contains("head_dim") || j["head_dim"].is_null() || j["head_dim"] == m.dim / m.n_heads,
          f.where() + ": head_dim other than hidden_size / num_attention_heads is not supported");
  cfg.train.seq_len = std::min(cfg.train.seq_len, m.max_seq_len);
  try {
    validate(cfg);
  } catch (const Error& e) {
    throw Error(f.where() + ": " + e.what());
  }
  return out;
}

TensorShapes hf_tensor_shapes(const ModelOptions& m, bool qwen) {
  const std::int64_t D = m.dim, hd = m.head_dim(), F = m.ffn_hidden, V = m.vocab_size;
  const std::int64_t q_dim = m.n_heads * hd, kv_dim = m.n_kv_heads * hd;
  TensorShapes t = {{"model.embed_tokens.weight", {V, D}}, {"model.norm.weight", {D}}};
  for (int l = 0; l < m.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t[p + "self_attn.q_proj.weight"] = {q_dim, D};
    t[p + "self_attn.k_proj.weight"] = {kv_dim, D};
    t[p + "self_attn.v_proj.weight"] = {kv_dim, D};
    t[p + "self_attn.o_proj.weight"] = {D, q_dim};
    if (qwen) {
      t[p + "self_attn.q_proj.bias"] = {q_dim};
      t[p + "self_attn.k_proj.bias"] = {kv_dim};
      t[p + "self_attn.v_proj.bias"] = {kv_dim};
    }
    t[p + "mlp.gate_proj.weight"] = {F, D};
    t[p + "mlp.up_proj.weight"] = {F, D};
    t[p + "mlp.down_proj.weight"] = {D, F};
    t[p + "input_layernorm.weight"] = {D};
    t[p + "post_attention_layernorm.weight"] = {D};
  }
  if (!m.tie_embeddings) t["lm_head.weight"] = {V, D};
  return t;
}

void require_hf_tensors(const TensorShapes& present, const ModelOptions& m, bool qwen, const std::string& st_path) {
  for (const auto& [name, shape] : hf_tensor_shapes(m, qwen)) {
    auto it = present.find(name);
    require(it != present.end(), "missing tensor " + name + " in " + st_path);
    require(it->second == shape, "tensor " + name + " in " + st_path + " has shape " + shape_str(it->second) +
                                     ", expected " + shape_str(shape));
  }
}

}  // namespace moxlab
