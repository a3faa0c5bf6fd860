// A scratch run store with hand-made runs and results for the `moxlab table` tests.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/store/run_store.h"
#include "experiments/report/table_build.h"
#include "experiments/report/table_spec.h"
#include "tests/scratch_dir.h"

namespace moxlab::testing {

struct TableStore {
  ScratchDir dir{"table"};
  RunStore store{dir.file("runs.db")};
  std::string git_rev = "0123456789abcdef0123456789abcdef01234567";  // of the runs added next (one clean build)

  // A finished train run with a flat config (as Config::to_json writes it) and results
  // (key, value, meta_json). Hashes and digests are fixed so rendered provenance is predictable.
  std::int64_t add_run(const nlohmann::json& config,
                       const std::vector<std::tuple<std::string, double, std::string>>& results,
                       RunStatus status = RunStatus::finished, std::optional<std::int64_t> sweep = std::nullopt) {
    RunRecord r;
    r.name = config.value("run.name", "run");
    r.kind = "train";
    r.status = status;
    r.config_json = config.dump();
    r.config_hash = "cfg" + std::to_string(++count_) + "0123456789abcdef";
    r.seed = config.value("train.seed", 0);
    r.git_rev = git_rev;
    r.data_digest = "feedbeef00112233";
    r.sweep_id = sweep;
    const std::int64_t id = store.create_run(r);
    for (const auto& [key, value, meta] : results) store.put_result(id, key, value, meta);
    return id;
  }

  Table build(const std::string& spec_toml, bool allow_mixed_builds = false) const {
    TableSpec spec = parse_table_spec(spec_toml, "spec.toml");
    spec.allow_mixed_builds = allow_mixed_builds;
    return build_table(spec, store);
  }

 private:
  int count_ = 0;
};

// A flat config of the dense model with the keys the tests vary.
inline nlohmann::json lr_config(int dim, double lr, int seed, const std::string& name = "dense") {
  return {{"run.name", name}, {"run.store", "x.db"}, {"model.dim", dim}, {"train.lr", lr}, {"train.seed", seed},
          {"train.max_steps", 100}};
}

inline const char* kPplMeta = R"j({"metric":"ppl","split":"val","definition":"exp(mean NLL)"})j";

}  // namespace moxlab::testing
