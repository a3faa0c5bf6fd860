// libFuzzer target: a result-table spec (`moxlab table SPEC.toml`) and the sweep references it takes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/common/error.h"
#include "experiments/report/table_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    moxlab::parse_table_spec(text, "fuzz.toml");
  } catch (const moxlab::Error&) {
  }
  try {
    moxlab::parse_sweep_refs(text);
  } catch (const moxlab::Error&) {
  }
  return 0;
}
