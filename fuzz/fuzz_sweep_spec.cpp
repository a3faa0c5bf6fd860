// libFuzzer target: a sweep spec (`sweep plan SPEC.toml`), parsed and expanded into its members.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/common/error.h"
#include "experiments/sweep/sweep_spec.h"
#include "fuzz/fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = moxlab::fuzz::write_input(data, size, "sweep.toml");
  try {
    const auto spec = moxlab::load_sweep_spec(path);
    moxlab::expand_sweep(spec, "runs/runs.db");
  } catch (const moxlab::Error&) {
  }
  return 0;
}
