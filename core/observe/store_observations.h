// Recording what `moxlab observe` / `moxlab route` computed: the headline results go onto the captured
// run, the output file becomes an artifact of the given kind (once: observing again replaces the
// results and keeps the one artifact row).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/observe/observe_capture.h"

namespace moxlab {

// Returns "" when stored, else why not (no run id in the capture, no store at store_path). Throws
// when the store does not know the run.
std::string store_observations(const std::string& store_path, std::int64_t run_id,
                               const std::vector<ObservedResult>& results, const std::string& artifact_kind,
                               const std::string& out_path, const std::string& artifact_meta_json);

}  // namespace moxlab
