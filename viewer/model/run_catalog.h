// RunCatalog: the viewer's in-memory snapshot of a run store (runs, their flat configs and results,
// sweeps), refreshed while runs write. The store is opened read-only; refresh() re-reads it only when
// the database or its WAL file changed on disk, and re-reads a run's results only when the run itself
// changed (status, times, error, tags), is still running or finished less than kResultsSettleSeconds
// ago (evaluation adds results after training marks a run finished), so a large store stays cheap to
// watch. Results added to a long-finished run later (a new `moxlab eval`) appear on Reload (force).
// A failed read keeps the previous snapshot and reports the problem in error(). A running run's shown
// status is re-checked on every refresh, even when the store has not changed: its process may have
// died without a word (killed, stale: run_liveness.h).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/store/run_records.h"

namespace moxlab::viewer {

struct RunRow {
  RunRecord run;
  std::string status;                     // as shown: run.status, or killed / stale (run_liveness.h)
  nlohmann::json config;                  // flat: {"model.dim": 192, ...}
  std::map<std::string, double> results;  // key -> value (NaN kept)
  std::string sweep_name;                 // "" when not a sweep member
  std::string variant;                    // run.variant, "" when unset
  std::string text;                       // what bare filter words search: name, kind, status, variant, tags, sweep
};

class RunCatalog {
 public:
  static constexpr double kResultsSettleSeconds = 1800;

  explicit RunCatalog(std::string db_path);

  // Re-reads what changed (everything when force). Returns true when the snapshot changed. Store
  // failures (missing file, not a database) are kept in error() instead of thrown, so the app can
  // show them and try again later.
  bool refresh(bool force = false);
  const std::string& error() const { return error_; }
  const std::string& path() const { return path_; }

  const std::vector<RunRow>& runs() const { return runs_; }
  const std::vector<SweepRecord>& sweeps() const { return sweeps_; }
  const RunRow* find(std::int64_t id) const;

  // A filter field of a run: id, name, kind, status (as shown), seed, sweep, variant, tag (the tags joined by
  // ','), host, error, a config key (model.dim) or a result key (ppl/val/all).
  static std::optional<std::string> field(const RunRow& row, const std::string& name);
  // Config keys (not run.*) whose values differ between the given runs, sorted; plus run.variant when set.
  static std::vector<std::string> varying_config_keys(const std::vector<const RunRow*>& rows);

  // Writes a run's tags (opens the store for writing just for this) and refreshes it.
  void set_tags(std::int64_t run, const std::vector<std::string>& tags);

 private:
  std::string path_, error_;
  std::vector<RunRow> runs_;
  std::vector<SweepRecord> sweeps_;
  std::string disk_stamp_;  // sizes and mtimes of the db and WAL files at the last read
  std::string disk_stamp() const;
  void read(bool force);  // the snapshot (reusing unchanged finished runs unless force); failures go to error_
  bool recheck_running();  // re-judges the shown status of running runs; true when one changed
};

// A JSON config value as the Runs panel and filters show it: strings bare, numbers in shortest form.
std::string config_value_text(const nlohmann::json& value);

}  // namespace moxlab::viewer
