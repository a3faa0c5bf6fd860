// Registering a run: the row in the run store (config JSON and hash, seed, the binary's git revision,
// data digest, host) and its directory runs/<id>-<name>/ holding config.json and the run's files. Every command
// that produces results (train, eval, import, capture) goes through here, so every number in a table
// traces back to one run row.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/model/param_count.h"

namespace moxlab {

struct RegisteredRun {
  std::int64_t id = -1;
  std::string dir;    // absolute run directory
  std::string store;  // run store path
};

// Creates the store row (status running) and the run directory with config.json.
RegisteredRun register_run(const Config& cfg, const std::string& kind, const std::string& note,
                           const std::string& data_digest = "", std::optional<std::int64_t> sweep_id = std::nullopt);

// Finishes an import: records the checkpoint artifact and parameter counts, status finished.
void finish_import_run(const RegisteredRun& run, const std::string& checkpoint, const ParamCount& params);

// Parameter-count results shared by every run kind: params/total, params/active (non-embedding).
void record_param_counts(std::int64_t run, const std::string& store, const ParamCount& params);

}  // namespace moxlab
