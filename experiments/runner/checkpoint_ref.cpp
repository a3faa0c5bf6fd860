#include "experiments/runner/checkpoint_ref.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

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

std::string resolve_init_from(const std::string& init_from, const std::string& store_path) {
  const std::string prefix = "sweep:";
  if (init_from.compare(0, prefix.size(), prefix) != 0) return init_from;
  const std::string ref = init_from.substr(prefix.size());
  const auto a = ref.find('/'), b = ref.rfind('/');
  require(a != std::string::npos && b != a && a > 0 && b + 1 < ref.size(),
          "train.init_from '" + init_from + "' must be sweep:NAME/VARIANT/SEED");
  const std::string name = ref.substr(0, a), variant = ref.substr(a + 1, b - a - 1), seed = ref.substr(b + 1);
  require(file_exists(store_path), "train.init_from '" + init_from + "': no run store at " + store_path);
  const RunStore store(store_path);
  const auto sweeps = store.list_sweeps();
  auto it = std::find_if(sweeps.rbegin(), sweeps.rend(), [&](const SweepRecord& s) { return s.name == name; });
  require(it != sweeps.rend(), "train.init_from '" + init_from + "': no sweep named " + name + " in " + store_path);
  for (const SweepMember& m : store.sweep_members(it->id)) {
    const auto cfg = nlohmann::json::parse(m.config_json);
    if (cfg.value("run.variant", "") != variant || std::to_string(cfg.value("train.seed", std::int64_t{-1})) != seed) continue;
    require(m.status == "finished" && m.run_id, "train.init_from '" + init_from + "': member " + std::to_string(m.idx) +
                                                    " of sweep " + std::to_string(it->id) + " is " + m.status +
                                                    ", not finished");
    const auto arts = store.artifacts(*m.run_id, "checkpoint");
    require(!arts.empty(), "train.init_from '" + init_from + "': run " + std::to_string(*m.run_id) + " has no checkpoint");
    return arts.back().path;
  }
  throw Error("train.init_from '" + init_from + "': sweep " + name + " has no member with run.variant " + variant +
              " and train.seed " + seed);
}

}  // namespace moxlab
