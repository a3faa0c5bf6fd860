// libFuzzer target: a llama2.c model file (`import llama2c --model`), through the torch-free check that
// runs before anything is built from it (core/formats/llama2c_format.h).
// Any outcome but success or a moxlab::Error (a one-line message) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/common/error.h"
#include "core/formats/llama2c_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    moxlab::parse_llama2c(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.bin");
  } catch (const moxlab::Error&) {
  }
  return 0;
}
