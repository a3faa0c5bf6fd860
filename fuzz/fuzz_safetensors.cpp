// libFuzzer target: a model.safetensors file (`import hf`, ToMoE MoE exports), through the torch-free
// check of its header, offsets and values (core/formats/safetensors_format.h), then, when it passes, the
// check that it holds the tensors of stories260K's HF config (the seed is its export).
// Any outcome but success or a moxlab::Error (a one-line message) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/common/error.h"
#include "core/formats/hf_checkpoint_layout.h"
#include "core/formats/safetensors_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  try {
    const moxlab::SafetensorsLayout layout = moxlab::parse_safetensors(file, "fuzz.safetensors");
    moxlab::TensorShapes present;
    for (const auto& e : layout.tensors) present[e.name] = e.shape;
    moxlab::ModelOptions m;
    m.vocab_size = 512;
    m.dim = 64;
    m.ffn_hidden = 172;
    m.n_layers = 5;
    m.n_heads = 8;
    m.n_kv_heads = 4;
    m.tie_embeddings = true;
    moxlab::require_hf_tensors(present, m, /*qwen=*/false, "fuzz.safetensors");
  } catch (const moxlab::Error&) {
  }
  return 0;
}
