#include "experiments/runner/checkpoint_ref.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/store/run_store.h"
#include "experiments/runner/run_registry.h"

namespace moxlab {

std::string run_checkpoint_path(const std::string& store_path, std::int64_t run_id) {
  require(file_exists(store_path), "no run store at " + store_path);
  RunStore store(store_path);
  store.get_run(run_id);  // throws "no run with id N"
  const auto arts = store.artifacts(run_id, "checkpoint");
  require(!arts.empty(), "run " + std::to_string(run_id) + " has no checkpoint");
  return arts.back().path;
}

ResolvedCheckpoint resolve_checkpoint(const CheckpointRef& ref, const std::string& kind) {
  require(ref.run_id >= 0 || !ref.checkpoint.empty(), "give --run ID or --checkpoint PATH");
  ResolvedCheckpoint out;
  if (ref.run_id >= 0) {
    out.path = run_checkpoint_path(ref.store, ref.run_id);
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

std::string resolve_init_from(const std::string& init_from, const std::string& store_path, std::int64_t own_seed,
                              const std::string& key) {
  const std::string prefix = "sweep:";
  if (init_from.compare(0, prefix.size(), prefix) != 0) return init_from;
  const std::string ref = init_from.substr(prefix.size());
  const auto a = ref.find('/'), b = ref.rfind('/');
  const bool has_seed = b != a;  // NAME/VARIANT/SEED; NAME/VARIANT takes this run's own seed
  require(a != std::string::npos && a > 0 && b + 1 < ref.size() && (!has_seed || b > a + 1),
          key + " '" + init_from + "' must be sweep:NAME/VARIANT or sweep:NAME/VARIANT/SEED");
  const std::string name = ref.substr(0, a);
  const std::string variant = has_seed ? ref.substr(a + 1, b - a - 1) : ref.substr(a + 1);
  const std::string seed = has_seed ? ref.substr(b + 1) : std::to_string(own_seed);
  require(file_exists(store_path), key + " '" + init_from + "': no run store at " + store_path);
  const RunStore store(store_path);
  const auto sweeps = store.list_sweeps();
  auto it = std::find_if(sweeps.rbegin(), sweeps.rend(), [&](const SweepRecord& s) { return s.name == name; });
  require(it != sweeps.rend(), key + " '" + init_from + "': no sweep named " + name + " in " + store_path);
  for (const SweepMember& m : store.sweep_members(it->id)) {
    const auto cfg = nlohmann::json::parse(m.config_json);
    if (cfg.value("run.variant", "") != variant || std::to_string(cfg.value("train.seed", std::int64_t{-1})) != seed) continue;
    require(m.status == "finished" && m.run_id, key + " '" + init_from + "': member " + std::to_string(m.idx) +
                                                    " of sweep " + std::to_string(it->id) + " is " + m.status +
                                                    ", not finished");
    const auto arts = store.artifacts(*m.run_id, "checkpoint");
    require(!arts.empty(), key + " '" + init_from + "': run " + std::to_string(*m.run_id) + " has no checkpoint");
    return arts.back().path;
  }
  throw Error(key + " '" + init_from + "': sweep " + name + " has no member with run.variant " + variant +
              " and train.seed " + seed);
}

}  // namespace moxlab
