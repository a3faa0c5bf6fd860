// libFuzzer target: an HDF5 file given to moxlab as a capture (`observe --capture`, `route --capture`),
// or as an observations, routing or ToMoE conversion file (the viewer's panels), read through the same
// functions the CLI and the viewer call. Those first read the file in a forked child
// (TensorLogReader::open_checked, core/store/tensor_log_probe.h): libhdf5 1.10 has memory errors and
// endless loops on corrupted files (most in structures without checksums: older files, and headers a
// changed byte turns into an older version) that no check outside the library prevents, and the child
// turns them into a clean Error. What runs in this process, and must never crash, is the reading of files
// the child read without trouble: the layout checks, the bounded reads, the value checks.
// Findings: a sanitizer report or crash in this process, a hang, an exception other than moxlab::Error.
// A probe child ended by a sanitizer report is the probe doing its job (the parent gets a clean error):
// its report goes to $MOXLAB_FUZZ_CHILD_REPORTS.<pid> (default /tmp/fuzz_tensor_log_child) instead of
// stderr, and libFuzzer's death callback, inherited through fork, must not save the input as a crash.
// Such a report is a finding only when the frame that failed is moxlab's walk (tensor_log_probe.cpp), not
// libhdf5.
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "core/common/error.h"
#include "core/observe/observe_capture.h"
#include "core/observe/router_domains.h"
#include "core/observe/tomoe_conversion_file.h"
#include "fuzz/fuzz_input_file.h"
#include "viewer/model/capture_files.h"
#include "viewer/model/tomoe_view.h"

namespace {

void read_clean(const std::function<void()>& read) {
  try {
    read();
  } catch (const moxlab::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Inputs are small: a probe child still reading after this long is stuck in libhdf5 (a clean error).
  ::setenv("MOXLAB_HDF5_PROBE_SECONDS", "0.5", 0);
  ::pthread_atfork(nullptr, nullptr, [] {
    static const char* reports = std::getenv("MOXLAB_FUZZ_CHILD_REPORTS");
    __sanitizer_set_report_path(reports ? reports : "/tmp/fuzz_tensor_log_child");
    __sanitizer_set_death_callback(nullptr);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moxlab;
  const std::string path = fuzz::write_input(data, size, "tensor_log.h5");
  const std::string out = path + ".out.h5";
  // The first reader probes the file; the others reuse the verdict (probe_tensor_log remembers it).
  read_clean([&] { observe_capture(path, out); });
  read_clean([&] { observe_routing(path, out); });
  read_clean([&] { viewer::read_observation_file(path); });
  read_clean([&] { viewer::read_token_texts(path, 3, 5); });
  read_clean([&] {
    for (const auto& t : viewer::read_routing_file(path).routers) (void)(t.spread() + t.least_used());
  });
  read_clean([&] {
    const TomoeConversionRecord c = read_tomoe_conversion(path);
    viewer::kept_width_fractions(c);
    viewer::expert_width_boxes(c);
  });
  read_clean([&] {
    const viewer::RoutedCapture c = viewer::read_routed_capture(path);
    for (int layer : c.layers)
      for (std::size_t d = 0; d < c.domains.size(); ++d)
        viewer::routed_spans(viewer::routed_tokens(c, layer, c.begin[d], std::min<std::int64_t>(c.count[d], 200)));
  });
  return 0;
}
