// libFuzzer target: an HF config.json (`import hf --dir`), through the torch-free parse that sets every
// size through its config key's range (core/formats/hf_checkpoint_layout.h), then the tensor list a
// config that passes implies.
// Any outcome but success or a moxlab::Error (a one-line message) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/common/error.h"
#include "core/formats/hf_checkpoint_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const moxlab::HfConfig c =
        moxlab::parse_hf_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz/config.json");
    moxlab::require_hf_tensors({}, c.config.model, c.qwen, "fuzz/model.safetensors");
  } catch (const moxlab::Error&) {
  }
  return 0;
}
