// libFuzzer target: a run config (TOML, `train --config`) and the config JSON a checkpoint carries.
// Any outcome but success or a moxlab::Error (a one-line message) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/common/error.h"
#include "core/config/config.h"
#include "fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = moxlab::fuzz::write_input(data, size, "config.toml");
  try {
    moxlab::load_config(path);
  } catch (const moxlab::Error&) {
  }
  try {
    moxlab::config_from_json(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const moxlab::Error&) {
  }
  return 0;
}
