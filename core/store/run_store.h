// RunStore: the SQLite database that records every run (config, status, times, host), its metric
// curves, headline results with their metric definitions, artifacts, sweeps and per-item audit rows.
//
// Several worker processes may open the same file and write at once: the database is in WAL mode,
// every write is one IMMEDIATE transaction (all rows of a call or none), and a writer waits up to
// busy_timeout_ms for another's transaction before failing with RunStoreBusy("database is locked: PATH")
// (store_retry.h waits longer; metric_log.h keeps a training's metrics while the store is busy).
// Every failure is a moxlab::Error one-liner naming the file. One RunStore per process (or thread);
// calls on one instance are serialised by an internal mutex. Do not carry an open RunStore across
// fork(): open a fresh one in the child. The schema is in run_store_schema.cpp.
//
// RunStoreOptions::read_only opens the file read-only; where SQLite cannot create the WAL index (-shm)
// next to it (a read-only directory: an archive, another user's runs) it reads the file as immutable
// (without what a WAL file left by a crashed writer may still hold).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "core/store/run_records.h"

namespace moxlab {

// Another process held the write lock past the busy timeout. The message is "database is locked: PATH".
class RunStoreBusy : public Error {
 public:
  using Error::Error;
};

// One metric value of a step, as log_metric_rows writes it (NaN is stored as NULL).
struct MetricRow {
  std::int64_t step = 0;
  std::string key;
  double value = 0;
  double wall_time = 0;  // Unix seconds
};

struct RunStoreOptions {
  int busy_timeout_ms = 10000;  // how long a write waits for another process's transaction
  bool read_only = false;       // viewers/reports: the file must exist; no schema is created
};

class RunStore {
 public:
  // Opens or creates the database (creating missing parent directories) and its schema.
  explicit RunStore(const std::string& path, RunStoreOptions options = {});
  ~RunStore();
  RunStore(RunStore&&) noexcept;
  RunStore& operator=(RunStore&&) noexcept;
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const;
  int schema_version() const;

  // --- runs -----------------------------------------------------------------------------------
  // Inserts a run and returns its id. run.id is ignored; empty config_hash becomes
  // sha256(config_json), empty host becomes this machine's name, created_at 0 becomes now.
  // config_json must be valid JSON. A run created running with an empty worker is held by this process
  // (worker this_worker_id(), run_liveness.h).
  std::int64_t create_run(const RunRecord& run);
  // Sets the status (and error text). Moving to running stamps started_at, and moving to a terminal
  // status stamps finished_at, unless they are already set. Moving to running also makes this process
  // the run's worker, with no heartbeat yet.
  void update_status(std::int64_t run, RunStatus status, const std::string& error = "");
  void set_started(std::int64_t run, std::optional<double> when = std::nullopt);   // default: now
  void set_finished(std::int64_t run, std::optional<double> when = std::nullopt);  // default: now
  // Replaces the run's tags (free labels a researcher attaches, e.g. in the viewer); duplicates and
  // empty strings are dropped, order is kept.
  void set_tags(std::int64_t run, const std::vector<std::string>& tags);
  // Stamps the heartbeat of a running run this process holds; false when it is not (any more) the
  // run's worker or the run is no longer running.
  bool heartbeat_run(std::int64_t run);
  // Throws Error("no run with id N in PATH").
  RunRecord get_run(std::int64_t run) const;
  std::vector<RunRecord> find_runs(const RunFilter& filter) const;  // ordered by id
  std::vector<RunRecord> list_runs() const;

  // --- metrics --------------------------------------------------------------------------------
  // All values of one step in one transaction. NaN is stored as NULL and read back as NaN.
  void log_metrics(std::int64_t run, std::int64_t step, const std::vector<std::pair<std::string, double>>& values,
                   std::optional<double> wall_time = std::nullopt);  // default: now
  // Rows of any number of steps in one transaction: all of them or none.
  void log_metric_rows(std::int64_t run, const std::vector<MetricRow>& rows);
  // Drops rows after `step`: a resumed run redoes the steps after its checkpoint and logs them again.
  void delete_metrics_after(std::int64_t run, std::int64_t step);
  // Ordered by step (then insertion order, if a resumed run logged a step twice).
  std::vector<MetricPoint> metrics(std::int64_t run, const std::string& key) const;
  std::vector<std::string> metric_keys(std::int64_t run) const;  // sorted

  // --- results --------------------------------------------------------------------------------
  // Upsert on (run, key). meta_json (valid JSON) defines the number, e.g.
  // {"metric":"acc_norm","split":"test","n":2376,"definition":"..."}.
  void put_result(std::int64_t run, const std::string& key, double value, const std::string& meta_json = "{}");
  std::vector<ResultRecord> results(std::int64_t run) const;  // sorted by key
  std::optional<ResultRecord> result(std::int64_t run, const std::string& key) const;

  // --- artifacts ------------------------------------------------------------------------------
  std::int64_t add_artifact(std::int64_t run, const std::string& kind, const std::string& path,
                            const std::string& meta_json = "{}");
  // kind "" returns every kind; ordered by id.
  std::vector<ArtifactRecord> artifacts(std::int64_t run, const std::string& kind = "") const;

  // --- per-item audit rows ----------------------------------------------------------------------
  // Inserts (or replaces, on the same run/task/idx) all rows in one transaction. Payloads must be JSON.
  void add_items(std::int64_t run, const std::string& task, const std::vector<std::pair<int, std::string>>& items);
  std::vector<ItemRecord> items(std::int64_t run, const std::string& task) const;  // ordered by idx

  // --- sweeps (run_store_sweeps.cpp) --------------------------------------------------------------
  // Inserts the sweep and all its members (status pending) in one transaction; member idx and
  // sweep_id are taken from the position and the new sweep.
  std::int64_t create_sweep(const std::string& name, const std::string& spec_json,
                            const std::vector<SweepMember>& members = {});
  SweepRecord get_sweep(std::int64_t sweep) const;
  std::vector<SweepRecord> list_sweeps() const;  // ordered by id
  std::vector<SweepMember> sweep_members(std::int64_t sweep) const;  // ordered by idx
  SweepMember sweep_member(std::int64_t sweep, int idx) const;      // Error when absent
  // Compare-and-set: takes the member for `worker` only if it is still in (expected_status,
  // expected_worker), as the caller read it. Sets running, heartbeat now, attempts + 1, clears error.
  // Returns false when another worker changed it first.
  bool claim_sweep_member(std::int64_t sweep, int idx, const std::string& expected_status,
                          const std::string& expected_worker, const std::string& worker);
  // The next calls change the member only while `worker` holds it; they return false otherwise (the
  // member was taken over, e.g. after this worker was presumed dead).
  bool heartbeat_sweep_member(std::int64_t sweep, int idx, const std::string& worker);
  bool set_sweep_member_run(std::int64_t sweep, int idx, const std::string& worker, std::int64_t run);
  // status: finished, failed or killed; stamps finished_at.
  bool finish_sweep_member(std::int64_t sweep, int idx, const std::string& worker, const std::string& status,
                           const std::string& error = "");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Unix time in seconds, the unit of every time column.
double unix_now();

}  // namespace moxlab
