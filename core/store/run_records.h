// Plain records of the run store (one struct per table row) and the run status vocabulary.
// They mirror the SQLite tables in run_store_schema.cpp column for column, so what a C++ caller sees is
// what `sqlite3` and pandas see. Times are Unix seconds (REAL); unset times and ids are std::nullopt.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moxlab {

enum class RunStatus { pending, running, finished, failed, killed };

// "pending", "running", ... exactly as stored in runs.status.
const char* to_string(RunStatus status);
// Inverse of to_string; throws Error on an unknown word.
RunStatus parse_run_status(const std::string& word);
// finished, failed and killed: the run will not change any more.
bool is_terminal(RunStatus status);

struct RunRecord {
  std::int64_t id = 0;  // assigned by create_run; ignored on input
  std::string name;
  std::string kind;  // "train", "eval", "capture", ...
  RunStatus status = RunStatus::pending;
  std::string config_json = "{}";
  std::string config_hash;  // create_run fills sha256(config_json) when empty
  std::int64_t seed = 0;
  std::string git_rev;
  std::string data_digest;
  std::string host;   // create_run fills gethostname() when empty
  std::string error;  // why a run failed; empty otherwise
  double created_at = 0;  // create_run fills "now" when 0
  std::optional<double> started_at;
  std::optional<double> finished_at;
  std::optional<std::int64_t> parent_run;
  std::optional<std::int64_t> sweep_id;
  std::vector<std::string> tags;  // stored as a JSON array of strings
  // The process holding a running run, "host:pid" (run_liveness.h), and its last heartbeat (unset
  // while it has not beaten; only long runs beat). create_run fills worker for a run created running.
  std::string worker;
  std::optional<double> heartbeat;
};

// Which runs find_runs returns; unset fields match everything.
struct RunFilter {
  std::optional<std::string> name;
  std::optional<std::string> kind;
  std::optional<RunStatus> status;
  std::optional<std::int64_t> sweep_id;
};

struct MetricPoint {
  std::int64_t step = 0;
  double value = 0;
};

// A headline number of a run ("hellaswag/acc_norm") with the definition that produced it.
// A name (domain, class) as one segment of a result key: '/' and '.' separate segments and table
// placeholders, so they become '_' ("T-shirt/top" -> "T-shirt_top"); the meta JSON keeps the name itself.
inline std::string result_key_segment(std::string name) {
  for (char& c : name)
    if (c == '/' || c == '.') c = '_';
  return name;
}

struct ResultRecord {
  std::int64_t run_id = 0;
  std::string key;
  double value = 0;
  std::string meta_json = "{}";  // {"metric":"acc_norm","split":"test","n":2376,"definition":"..."}
};

struct ArtifactRecord {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string kind;  // "checkpoint", "tensor_log", "plot", ...
  std::string path;
  double created_at = 0;
  std::string meta_json = "{}";
};

// One per-item audit row (e.g. the per-choice log-likelihoods of one zero-shot item).
struct ItemRecord {
  int idx = 0;
  std::string payload_json;
};

struct SweepRecord {
  std::int64_t id = 0;
  std::string name;
  std::string spec_json = "{}";
  double created_at = 0;
};

// One member of a sweep: a fully resolved config planned by `moxlab sweep plan`, and its progress.
// A worker takes a member by compare-and-set on (status, worker), so two workers never run the same one.
struct SweepMember {
  std::int64_t sweep_id = 0;
  int idx = 0;
  std::optional<std::int64_t> run_id;  // the member's train run, set once it is registered
  std::string status = "pending";      // pending, running, finished, failed, killed
  std::string label;                   // e.g. "train.lr=0.001 model.d_model=128 train.seed=1"
  std::string config_json = "{}";      // the resolved config the member runs
  std::string worker;                  // "host:pid" of the process that holds or last held it
  std::optional<double> heartbeat;     // last sign of life of that worker (Unix seconds)
  int attempts = 0;                    // how many times a worker took it
  std::string error;                   // why it failed or stopped
  std::optional<double> started_at;
  std::optional<double> finished_at;
};

}  // namespace moxlab
