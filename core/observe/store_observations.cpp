#include "core/observe/store_observations.h"

#include <filesystem>

#include "core/store/run_store.h"

namespace moxlab {

std::string store_observations(const std::string& store_path, std::int64_t run_id,
                               const std::vector<ObservedResult>& results, const std::string& artifact_kind,
                               const std::string& out_path, const std::string& artifact_meta_json) {
  if (run_id < 0) return "the capture has no run_id";
  if (!std::filesystem::exists(store_path)) return "no run store at " + store_path;
  RunStore store(store_path);
  store.get_run(run_id);  // throws "no run with id N"
  for (const auto& r : results) store.put_result(run_id, r.key, r.value, r.meta_json);
  const std::string out = std::filesystem::absolute(out_path).string();
  for (const auto& art : store.artifacts(run_id, artifact_kind))
    if (art.path == out) return "";
  store.add_artifact(run_id, artifact_kind, out, artifact_meta_json);
  return "";
}

}  // namespace moxlab
