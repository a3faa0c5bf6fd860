#include "experiments/runner/run_registry.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/build_revision.h"
#include "core/common/paths.h"
#include "core/store/run_store.h"

namespace moxlab {

RegisteredRun register_run(const Config& cfg, const std::string& kind, const std::string& note,
                           const std::string& data_digest, std::optional<std::int64_t> sweep_id) {
  RunStore store(cfg.run.store);
  RunRecord r;
  r.name = cfg.run.name;
  r.kind = kind;
  r.status = RunStatus::running;
  r.config_json = cfg.to_json();
  r.config_hash = cfg.hash();
  r.seed = cfg.train.seed;
  r.git_rev = build_git_revision();
  r.data_digest = data_digest;
  r.sweep_id = sweep_id;
  if (!note.empty()) r.tags.push_back(note);
  RegisteredRun out;
  out.id = store.create_run(r);
  store.set_started(out.id);
  out.store = cfg.run.store;
  out.dir = std::filesystem::absolute(cfg.run.out_dir + "/" + std::to_string(out.id) + "-" + cfg.run.name).string();
  make_dirs(out.dir);
  write_text_atomically(out.dir + "/config.json", nlohmann::json::parse(r.config_json).dump(2) + "\n");
  store.add_artifact(out.id, "run_dir", out.dir);
  return out;
}

void record_param_counts(std::int64_t run, const std::string& store_path, const ParamCount& params) {
  RunStore store(store_path);
  const std::string def = "non-embedding parameters (token embedding and output head excluded)";
  store.put_result(run, "params/total", static_cast<double>(params.total),
                   nlohmann::json{{"metric", "count"}, {"definition", "total " + def}}.dump());
  store.put_result(run, "params/active", static_cast<double>(params.active),
                   nlohmann::json{{"metric", "count"}, {"definition", "activated per token, " + def}}.dump());
}

void finish_import_run(const RegisteredRun& run, const std::string& checkpoint, const ParamCount& params) {
  record_param_counts(run.id, run.store, params);
  RunStore store(run.store);
  store.add_artifact(run.id, "checkpoint", std::filesystem::absolute(checkpoint).string());
  store.update_status(run.id, RunStatus::finished);
}

}  // namespace moxlab
