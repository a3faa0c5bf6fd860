// The HF checkpoint layout of the LLaMA family that moxlab imports (core/io/hf_checkpoint.h), checked
// without LibTorch: config.json's fields, and the tensors (transformers' names and shapes) that a config
// implies, so that nothing is built from a config that the weights file does not back.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/config.h"

namespace moxlab {

struct HfConfig {
  Config config;      // the model options (run kind "import")
  bool qwen = false;  // Qwen2ForCausalLM: LLaMA plus Q/K/V biases
};

// Parses config.json: the architecture (LlamaForCausalLM or Qwen2ForCausalLM), every size set through
// its config key (num_hidden_layers as model.n_layers, ...: the schema's ranges, as for a TOML file),
// and variants moxlab does not compute refused. Throws Error naming the file and the field.
HfConfig parse_hf_config(std::string_view text, const std::string& path);

using TensorShapes = std::map<std::string, std::vector<std::int64_t>>;

// The tensors an HF checkpoint of these options holds, by name, with their shapes.
TensorShapes hf_tensor_shapes(const ModelOptions& m, bool qwen);

// Throws Error naming the first expected tensor that `present` lacks or holds in another shape
// (`st_path` names the weights file). Tensors the model does not use are ignored, as transformers does.
void require_hf_tensors(const TensorShapes& present, const ModelOptions& m, bool qwen, const std::string& st_path);

}  // namespace moxlab
