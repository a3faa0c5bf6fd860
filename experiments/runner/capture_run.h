// Capturing activations of a resolved checkpoint on its validation split, as a library call shared
// by `moxlab capture` and `moxlab observe` (which captures when a run has no suitable capture yet):
// the HDF5 tensor log (layout: core/capture/capture.h) with the run's attributes, recorded as a
// "capture" artifact of the run.
#pragma once
#include <functional>
#include <string>

#include "core/capture/capture.h"
#include "experiments/runner/checkpoint_ref.h"

namespace moxlab {

struct CaptureRunResult {
  std::string path;  // absolute path of the capture file
  CaptureSummary summary;
};

// Writes out (atomically) and adds the artifact to ck.run_id in `store`. log receives data-preparation
// messages.
CaptureRunResult capture_run(const ResolvedCheckpoint& ck, const CaptureOptions& opt, const std::string& out,
                             const std::string& store, const std::function<void(const std::string&)>& log);

// A new capture of a stored run's checkpoint (opt.seq_len clipped to the model's context), written to
// `file_name` in the run's directory (the checkpoint's directory for a run without one).
CaptureRunResult capture_stored_run(const std::string& store, std::int64_t run_id, CaptureOptions opt,
                                    const std::string& file_name, const std::function<void(const std::string&)>& log);

}  // namespace moxlab
