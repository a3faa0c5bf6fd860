// The torch-free check of HF checkpoints (core/formats/hf_checkpoint_layout.h): config.json's sizes go
// through their config keys' ranges (num_hidden_layers 5000000 is refused at once), and the tensors a
// config implies must all be in the weights file with their shapes before a model is built.
#include <catch2/catch.hpp>

#include <chrono>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/formats/hf_checkpoint_layout.h"
#include "core/formats/safetensors_format.h"
#include "tests/tiny_weight_files.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_hf_config(text, "d/config.json");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("d/config.json") != std::string::npos);
    return what;
  }
  return "(accepted)";
}

std::string with(const char* key, const nlohmann::json& value) {
  auto j = nlohmann::json::parse(tiny_hf_config());
  j[key] = value;
  return j.dump();
}

TensorShapes shapes_in(const std::string& safetensors) {
  TensorShapes out;
  for (const auto& e : parse_safetensors(safetensors, "w").tensors) out[e.name] = e.shape;
  return out;
}

}  // namespace

TEST_CASE("HF config: the tiny LLaMA config gives its model options", "[hf][formats]") {
  const TinyShape s;
  const HfConfig c = parse_hf_config(tiny_hf_config(s), "d/config.json");
  CHECK_FALSE(c.qwen);
  CHECK(c.config.model.dim == s.dim);
  CHECK(c.config.model.ffn_hidden == s.hidden);
  CHECK(c.config.model.n_layers == s.layers);
  CHECK(c.config.model.n_kv_heads == s.kv_heads);
  CHECK(c.config.model.vocab_size == s.vocab);
  CHECK(c.config.model.max_seq_len == s.seq);
  CHECK(c.config.model.norm_eps == 1e-5);
  CHECK(c.config.model.tie_embeddings);
  CHECK(c.config.run.kind == "import");
  auto j = nlohmann::json::parse(tiny_hf_config(s));
  j["architectures"] = {"Qwen2ForCausalLM"};
  j.erase("num_key_value_heads");  // defaults to num_attention_heads
  const HfConfig q = parse_hf_config(j.dump(), "d/config.json");
  CHECK(q.qwen);
  CHECK(q.config.model.qkv_bias);
  CHECK(q.config.model.n_kv_heads == s.heads);
}

TEST_CASE("HF config: num_hidden_layers 5000000 is refused at once, by its config range", "[hf][formats]") {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = error_of(with("num_hidden_layers", 5000000));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100));
  INFO(e);
  CHECK(e.find("'model.n_layers' = 5000000 is out of range [1, 512] (num_hidden_layers in HF config d/config.json)") !=
        std::string::npos);
}

TEST_CASE("HF config: sizes out of range, of the wrong type or beyond 64 bits are refused", "[hf][formats]") {
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"hidden_size", 4294967304LL, "'model.dim' = 4294967304 is out of range"},  // 2^32 + 8 must not wrap to 8
      {"hidden_size", 8.0, "lacks integer hidden_size"},
      {"hidden_size", "8", "lacks integer hidden_size"},
      {"intermediate_size", 0, "intermediate_size must be positive"},
      {"vocab_size", 0, "vocab_size must be positive"},
      {"vocab_size", 18446744073709551615ULL, "vocab_size = 18446744073709551615 is out of range"},
      {"num_attention_heads", -2, "num_attention_heads must be positive"},
      {"num_attention_heads", 3, "must split into num_attention_heads heads of even size"},
      {"num_key_value_heads", 3, "model.n_heads must be a multiple of model.n_kv_heads"},
      {"max_position_embeddings", 1 << 21, "'model.max_seq_len' = 2097152 is out of range"},
      {"rms_norm_eps", 1e300, "'model.norm_eps' = 1e+300 is out of range"},
      {"rms_norm_eps", nullptr, "rms_norm_eps must be a number"},
      {"rope_theta", "big", "rope_theta must be a number"},
      {"tie_word_embeddings", "yes", "tie_word_embeddings must be true or false"},
      {"hidden_act", "gelu", "only hidden_act silu"},
      {"rope_scaling", {{"type", "linear"}}, "rope_scaling is not supported"},
      {"architectures", {"GPT2LMHeadModel"}, "unknown HF architecture 'GPT2LMHeadModel'"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(with(c.key, c.value));
    INFO(c.key << " = " << c.value.dump() << ": " << e);
    CHECK(e.find(c.needle) != std::string::npos);
  }
  CHECK(error_of("{not json").find("is not valid JSON") != std::string::npos);
  CHECK(error_of("[]").find("is not a JSON object") != std::string::npos);
}

TEST_CASE("HF checkpoint: every tensor the config implies must be in the file, with its shape", "[hf][formats]") {
  const TinyShape s;
  const HfConfig c = parse_hf_config(tiny_hf_config(s), "d/config.json");
  const TensorShapes present = shapes_in(tiny_hf_safetensors(s).bytes);
  CHECK_NOTHROW(require_hf_tensors(present, c.config.model, false, "d/model.safetensors"));
  CHECK(hf_tensor_shapes(c.config.model, false).size() == 2 + 9 * static_cast<std::size_t>(s.layers));
  CHECK(hf_tensor_shapes(c.config.model, true).size() == 2 + 12 * static_cast<std::size_t>(s.layers));

  // The Qwen2 biases, an untied head, more layers, a wider model: named, before anything is built.
  CHECK_THROWS_WITH(require_hf_tensors(present, c.config.model, true, "d/model.safetensors"),
                    "missing tensor model.layers.0.self_attn.k_proj.bias in d/model.safetensors");
  ModelOptions untied = c.config.model;
  untied.tie_embeddings = false;
  CHECK_THROWS_WITH(require_hf_tensors(present, untied, false, "w"), "missing tensor lm_head.weight in w");
  ModelOptions deeper = c.config.model;
  deeper.n_layers = 512;
  CHECK_THROWS_WITH(require_hf_tensors(present, deeper, false, "w"), Catch::Contains("missing tensor model.layers.10."));
  ModelOptions wider = c.config.model;
  wider.vocab_size = 1 << 22;
  CHECK_THROWS_WITH(require_hf_tensors(present, wider, false, "w"),
                    "tensor model.embed_tokens.weight in w has shape [32, 8], expected [4194304, 8]");
}
