#include "experiments/runner/checkpoint_ref.h"

#include <filesystem>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/store/run_store.h"
#include "experiments/runner/run_registry.h"

namespace moxlab {

ResolvedCheckpoint resolve_checkpoint(const CheckpointRef& ref, const std::string& kind) {
  require(ref.run_id >= 0 || !ref.checkpoint.empty(), "give --run ID or --checkpoint PATH");
  ResolvedCheckpoint out;
  if (ref.run_id >= 0) {
    require(file_exists(ref.store), "no run store at " + ref.store);
    RunStore store(ref.store);
    store.get_run(ref.run_id);  // throws "no run with id N"
    auto arts = store.artifacts(ref.run_id, "checkpoint");
    require(!arts.empty(), "run " + std::to_string(ref.run_id) + " has no checkpoint");
    out.path = arts.back().path;
    out.run_id = ref.run_id;
  } else {
    out.path = std::filesystem::absolute(ref.checkpoint).string();
  }
  out.loaded = load_checkpoint(out.path);
  if (out.run_id < 0 && out.loaded.meta.run_id >= 0 && file_exists(ref.store)) {
    RunStore store(ref.store);
    for (const auto& a : store.artifacts(out.loaded.meta.run_id, "checkpoint"))
      if (a.path == out.path) out.run_id = out.loaded.meta.run_id;
  }
  if (out.run_id < 0) {
    Config cfg = out.loaded.config;
    cfg.run.store = ref.store;
    cfg.run.name = kind + "-" + std::filesystem::path(out.path).stem().string();
    RegisteredRun run = register_run(cfg, kind, "checkpoint " + out.path);
    RunStore(ref.store).add_artifact(run.id, "checkpoint", out.path);
    out.run_id = run.id;
    out.new_run = true;
  }
  return out;
}

}  // namespace moxlab
