// RunStore over SQLiteCpp. Every public call goes through Impl::guarded(), which holds the mutex and
// turns SQLite exceptions into moxlab::Error; every write is one IMMEDIATE transaction, so a failure
// (lock timeout, constraint, full disk) rolls back and leaves no partial rows.
#include "core/store/run_store.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/process_probe.h"
#include "core/common/sha256.h"
#include "core/store/run_liveness.h"
#include "core/store/run_store_impl.h"
#include "core/store/run_store_schema.h"
#include "core/store/sqlite_error.h"

namespace moxlab {

using namespace store_detail;

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

namespace {

const char* const kRunColumns =
    "id, name, kind, status, config_json, config_hash, seed, git_rev, data_digest, host, error, "
    "created_at, started_at, finished_at, parent_run, sweep_id, tags";

// The columns read_run reads. A read-only store of schema 2 (not migrated) has no worker yet.
std::string run_columns(int schema_version) {
  return std::string(kRunColumns) + (schema_version >= 3 ? ", worker, heartbeat" : ", '' AS worker, NULL AS heartbeat");
}

RunRecord read_run(SQLite::Statement& q) {
  RunRecord r;
  r.id = q.getColumn(0).getInt64();
  r.name = q.getColumn(1).getString();
  r.kind = q.getColumn(2).getString();
  r.status = parse_run_status(q.getColumn(3).getString());
  r.config_json = q.getColumn(4).getString();
  r.config_hash = q.getColumn(5).getString();
  r.seed = q.getColumn(6).getInt64();
  r.git_rev = q.getColumn(7).getString();
  r.data_digest = q.getColumn(8).getString();
  r.host = q.getColumn(9).getString();
  r.error = q.getColumn(10).getString();
  r.created_at = q.getColumn(11).getDouble();
  r.started_at = optional_real(q.getColumn(12));
  r.finished_at = optional_real(q.getColumn(13));
  r.parent_run = optional_int(q.getColumn(14));
  r.sweep_id = optional_int(q.getColumn(15));
  r.tags = nlohmann::json::parse(q.getColumn(16).getString()).get<std::vector<std::string>>();
  r.worker = q.getColumn(17).getString();
  r.heartbeat = optional_real(q.getColumn(18));
  return r;
}

}  // namespace


namespace {

// "file:PATH?immutable=1" with the characters a URI path cannot hold escaped.
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  const std::string absolute = std::filesystem::absolute(path).string();
  for (const unsigned char c : absolute) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      uri += buf;
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?immutable=1";
}

// Opens a store read-only. Reading a WAL database needs its -shm index; when SQLite can neither find
// nor create it (a read-only directory), the file is read as immutable: no locks, no WAL. No writer
// is at work then (it would have created the -shm), and the next open sees what a later one writes.
std::unique_ptr<SQLite::Database> open_read_only(const std::string& path, int busy_timeout_ms, int& version) {
  try {
    auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY, busy_timeout_ms);
    version = run_store_schema_version(*db);  // the first read: this is where a missing -shm fails
    return db;
  } catch (const SQLite::Exception& e) {
    const int code = (e.getExtendedErrorCode() >= 0 ? e.getExtendedErrorCode() : e.getErrorCode()) & 0xff;
    if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN) throw;
  }
  auto db = std::make_unique<SQLite::Database>(immutable_uri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI,
                                               busy_timeout_ms);
  version = run_store_schema_version(*db);
  return db;
}

// Connects and brings the file to WAL mode and the current schema. Idempotent, so it can be retried.
std::unique_ptr<SQLite::Database> connect(const std::string& path, const RunStoreOptions& options, int& version) {
  if (options.read_only) {
    auto db = open_read_only(path, options.busy_timeout_ms, version);
    db->exec("PRAGMA foreign_keys=ON");
    require(version > 0, "run store " + path + " has no moxlab schema");
    require(version <= kRunStoreSchemaVersion,
            "run store " + path + " has schema version " + std::to_string(version) +
                " but this moxlab understands up to " + std::to_string(kRunStoreSchemaVersion));
    return db;
  }
  auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, options.busy_timeout_ms);
  {
    // WAL lets readers and one writer proceed together; the setting is persistent in the file.
    SQLite::Statement wal(*db, "PRAGMA journal_mode=WAL");
    wal.executeStep();
    db->exec("PRAGMA synchronous=NORMAL");  // durable across process crashes; WAL keeps it consistent
  }
  db->exec("PRAGMA foreign_keys=ON");  // per connection: metrics of a non-existent run are refused
  ensure_run_store_schema(*db, path);
  version = kRunStoreSchemaVersion;
  return db;
}

}  // namespace

RunStore::RunStore(const std::string& path, RunStoreOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->options = options;
  if (options.read_only) {
    require(file_exists(path), "no run store at " + path);
  } else {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) make_dirs(parent.string());
  }
  // While a brand-new file is still in rollback-journal mode, workers racing to switch it to WAL and
  // create the schema can deadlock on SQLite's file locks; SQLite then answers SQLITE_BUSY at once
  // instead of calling the busy handler. Setup is idempotent, so retry it until the busy timeout.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.busy_timeout_ms);
  std::minstd_rand jitter(static_cast<unsigned>(::getpid()));
  for (;;) {
    try {
      impl_->db = connect(path, options, impl_->schema_version);
      return;
    } catch (const SQLite::Exception& e) {
      if (!is_busy(e) || std::chrono::steady_clock::now() >= deadline) throw_sqlite_error(e, path, "open");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + jitter() % 20));
  }
}

RunStore::~RunStore() = default;
RunStore::RunStore(RunStore&&) noexcept = default;
RunStore& RunStore::operator=(RunStore&&) noexcept = default;

const std::string& RunStore::path() const { return live(impl_).path; }

int RunStore::schema_version() const {
  return live(impl_).guarded("read the schema version", [&](SQLite::Database& db) { return run_store_schema_version(db); });
}

// --- runs -------------------------------------------------------------------------------------------

std::int64_t RunStore::create_run(const RunRecord& run) {
  const std::string config = run.config_json.empty() ? "{}" : run.config_json;
  require_json(config, "config_json of run '" + run.name + "'");
  return live(impl_).guarded("create run '" + run.name + "'", [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db,
                        "INSERT INTO runs(name, kind, status, config_json, config_hash, seed, git_rev, data_digest, "
                        "host, error, created_at, started_at, finished_at, parent_run, sweep_id, tags, worker, heartbeat) "
                        "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    q.bind(1, run.name);
    q.bind(2, run.kind);
    q.bind(3, to_string(run.status));
    q.bind(4, config);
    q.bind(5, run.config_hash.empty() ? sha256_hex(config) : run.config_hash);
    q.bind(6, static_cast<int64_t>(run.seed));
    q.bind(7, run.git_rev);
    q.bind(8, run.data_digest);
    q.bind(9, run.host.empty() ? host_name() : run.host);
    q.bind(10, run.error);
    q.bind(11, run.created_at == 0 ? unix_now() : run.created_at);
    bind_optional(q, 12, run.started_at);
    bind_optional(q, 13, run.finished_at);
    bind_optional(q, 14, run.parent_run);
    bind_optional(q, 15, run.sweep_id);
    q.bind(16, nlohmann::json(run.tags).dump());
    q.bind(17, run.worker.empty() && run.status == RunStatus::running ? this_worker_id() : run.worker);
    bind_optional(q, 18, run.heartbeat);
    q.exec();
    const std::int64_t id = db.getLastInsertRowid();
    tx.commit();
    return id;
  });
}

void RunStore::update_status(std::int64_t run, RunStatus status, const std::string& error) {
  const std::string action = "set status of run " + std::to_string(run);
  live(impl_).guarded(action, [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    // Resuming (-> running) clears finished_at and makes this process the worker; the first start and
    // the first end are kept.
    SQLite::Statement q(db,
                        "UPDATE runs SET status = ?1, error = ?2, "
                        "worker = CASE WHEN ?1 = 'running' THEN ?6 ELSE worker END, "
                        "heartbeat = CASE WHEN ?1 = 'running' THEN NULL ELSE heartbeat END, "
                        "started_at = CASE WHEN ?1 = 'running' THEN COALESCE(started_at, ?3) ELSE started_at END, "
                        "finished_at = CASE WHEN ?1 = 'running' THEN NULL "
                        "                   WHEN ?4 THEN COALESCE(finished_at, ?3) ELSE finished_at END "
                        "WHERE id = ?5");
    q.bind(1, to_string(status));
    q.bind(2, error);
    q.bind(3, unix_now());
    q.bind(4, is_terminal(status) ? 1 : 0);
    q.bind(5, static_cast<int64_t>(run));
    q.bind(6, this_worker_id());
    if (q.exec() == 0) live(impl_).no_run(run);
    tx.commit();
  });
}

bool RunStore::heartbeat_run(std::int64_t run) {
  return live(impl_).guarded("heartbeat run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "UPDATE runs SET heartbeat = ? WHERE id = ? AND worker = ? AND status = 'running'");
    q.bind(1, unix_now());
    q.bind(2, static_cast<int64_t>(run));
    q.bind(3, this_worker_id());
    const bool held = q.exec() == 1;
    tx.commit();
    return held;
  });
}

void RunStore::set_tags(std::int64_t run, const std::vector<std::string>& tags) {
  std::vector<std::string> clean;
  for (const auto& t : tags)
    if (!t.empty() && std::find(clean.begin(), clean.end(), t) == clean.end()) clean.push_back(t);
  live(impl_).guarded("set tags of run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "UPDATE runs SET tags = ? WHERE id = ?");
    q.bind(1, nlohmann::json(clean).dump());
    q.bind(2, static_cast<int64_t>(run));
    if (q.exec() == 0) live(impl_).no_run(run);
    tx.commit();
  });
}

void RunStore::set_started(std::int64_t run, std::optional<double> when) {
  live(impl_).guarded("set start time of run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "UPDATE runs SET started_at = ? WHERE id = ?");
    q.bind(1, when.value_or(unix_now()));
    q.bind(2, static_cast<int64_t>(run));
    if (q.exec() == 0) live(impl_).no_run(run);
    tx.commit();
  });
}

void RunStore::set_finished(std::int64_t run, std::optional<double> when) {
  live(impl_).guarded("set finish time of run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "UPDATE runs SET finished_at = ? WHERE id = ?");
    q.bind(1, when.value_or(unix_now()));
    q.bind(2, static_cast<int64_t>(run));
    if (q.exec() == 0) live(impl_).no_run(run);
    tx.commit();
  });
}

RunRecord RunStore::get_run(std::int64_t run) const {
  return live(impl_).guarded("read run " + std::to_string(run), [&](SQLite::Database& db) {
    SQLite::Statement q(db, "SELECT " + run_columns(live(impl_).schema_version) + " FROM runs WHERE id = ?");
    q.bind(1, static_cast<int64_t>(run));
    if (!q.executeStep()) live(impl_).no_run(run);
    return read_run(q);
  });
}

std::vector<RunRecord> RunStore::find_runs(const RunFilter& filter) const {
  return live(impl_).guarded("list runs", [&](SQLite::Database& db) {
    std::string sql = "SELECT " + run_columns(live(impl_).schema_version) + " FROM runs WHERE 1";
    if (filter.name) sql += " AND name = :name";
    if (filter.kind) sql += " AND kind = :kind";
    if (filter.status) sql += " AND status = :status";
    if (filter.sweep_id) sql += " AND sweep_id = :sweep";
    sql += " ORDER BY id";
    SQLite::Statement q(db, sql);
    if (filter.name) q.bind(":name", *filter.name);
    if (filter.kind) q.bind(":kind", *filter.kind);
    if (filter.status) q.bind(":status", to_string(*filter.status));
    if (filter.sweep_id) q.bind(":sweep", static_cast<int64_t>(*filter.sweep_id));
    std::vector<RunRecord> out;
    while (q.executeStep()) out.push_back(read_run(q));
    return out;
  });
}

std::vector<RunRecord> RunStore::list_runs() const { return find_runs(RunFilter{}); }

// --- metrics ----------------------------------------------------------------------------------------

void RunStore::log_metrics(std::int64_t run, std::int64_t step,
                           const std::vector<std::pair<std::string, double>>& values, std::optional<double> wall_time) {
  const double t = wall_time.value_or(unix_now());
  std::vector<MetricRow> rows;
  rows.reserve(values.size());
  for (const auto& [key, value] : values) rows.push_back({step, key, value, t});
  log_metric_rows(run, rows);
}

void RunStore::log_metric_rows(std::int64_t run, const std::vector<MetricRow>& rows) {
  if (rows.empty()) return;
  live(impl_).guarded("log metrics for run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "INSERT INTO metrics(run_id, step, key, value, wall_time) VALUES(?,?,?,?,?)");
    for (const auto& row : rows) {
      q.bind(1, static_cast<int64_t>(run));
      q.bind(2, static_cast<int64_t>(row.step));
      q.bind(3, row.key);
      q.bind(4, row.value);  // NaN binds as NULL
      q.bind(5, row.wall_time);
      q.exec();
      q.reset();
    }
    tx.commit();
  });
}

void RunStore::delete_metrics_after(std::int64_t run, std::int64_t step) {
  live(impl_).guarded("delete metrics of run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "DELETE FROM metrics WHERE run_id = ? AND step > ?");
    q.bind(1, static_cast<int64_t>(run));
    q.bind(2, static_cast<int64_t>(step));
    q.exec();
    tx.commit();
  });
}

std::vector<MetricPoint> RunStore::metrics(std::int64_t run, const std::string& key) const {
  return live(impl_).guarded("read metric " + key + " of run " + std::to_string(run), [&](SQLite::Database& db) {
    SQLite::Statement q(db, "SELECT step, value FROM metrics WHERE run_id = ? AND key = ? ORDER BY step, rowid");
    q.bind(1, static_cast<int64_t>(run));
    q.bind(2, key);
    std::vector<MetricPoint> out;
    while (q.executeStep()) out.push_back({q.getColumn(0).getInt64(), real_or_nan(q.getColumn(1))});
    return out;
  });
}

std::vector<std::string> RunStore::metric_keys(std::int64_t run) const {
  return live(impl_).guarded("list metric keys of run " + std::to_string(run), [&](SQLite::Database& db) {
    SQLite::Statement q(db, "SELECT DISTINCT key FROM metrics WHERE run_id = ? ORDER BY key");
    q.bind(1, static_cast<int64_t>(run));
    std::vector<std::string> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  });
}

// --- results ----------------------------------------------------------------------------------------

void RunStore::put_result(std::int64_t run, const std::string& key, double value, const std::string& meta_json) {
  const std::string meta = meta_json.empty() ? "{}" : meta_json;
  require_json(meta, "meta_json of result " + key);
  live(impl_).guarded("store result " + key + " of run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db,
                        "INSERT INTO results(run_id, key, value, meta_json) VALUES(?,?,?,?) "
                        "ON CONFLICT(run_id, key) DO UPDATE SET value = excluded.value, meta_json = excluded.meta_json");
    q.bind(1, static_cast<int64_t>(run));
    q.bind(2, key);
    q.bind(3, value);
    q.bind(4, meta);
    q.exec();
    tx.commit();
  });
}

std::vector<ResultRecord> RunStore::results(std::int64_t run) const {
  return live(impl_).guarded("read results of run " + std::to_string(run), [&](SQLite::Database& db) {
    SQLite::Statement q(db, "SELECT run_id, key, value, meta_json FROM results WHERE run_id = ? ORDER BY key");
    q.bind(1, static_cast<int64_t>(run));
    std::vector<ResultRecord> out;
    while (q.executeStep()) {
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), real_or_nan(q.getColumn(2)),
                     q.getColumn(3).getString()});
    }
    return out;
  });
}

std::optional<ResultRecord> RunStore::result(std::int64_t run, const std::string& key) const {
  return live(impl_).guarded("read result " + key + " of run " + std::to_string(run),
                        [&](SQLite::Database& db) -> std::optional<ResultRecord> {
                          SQLite::Statement q(db, "SELECT value, meta_json FROM results WHERE run_id = ? AND key = ?");
                          q.bind(1, static_cast<int64_t>(run));
                          q.bind(2, key);
                          if (!q.executeStep()) return std::nullopt;
                          return ResultRecord{run, key, real_or_nan(q.getColumn(0)), q.getColumn(1).getString()};
                        });
}

// --- artifacts --------------------------------------------------------------------------------------

std::int64_t RunStore::add_artifact(std::int64_t run, const std::string& kind, const std::string& path,
                                    const std::string& meta_json) {
  const std::string meta = meta_json.empty() ? "{}" : meta_json;
  require_json(meta, "meta_json of artifact " + path);
  return live(impl_).guarded("add artifact " + path + " to run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "INSERT INTO artifacts(run_id, kind, path, created_at, meta_json) VALUES(?,?,?,?,?)");
    q.bind(1, static_cast<int64_t>(run));
    q.bind(2, kind);
    q.bind(3, path);
    q.bind(4, unix_now());
    q.bind(5, meta);
    q.exec();
    const std::int64_t id = db.getLastInsertRowid();
    tx.commit();
    return id;
  });
}

std::vector<ArtifactRecord> RunStore::artifacts(std::int64_t run, const std::string& kind) const {
  return live(impl_).guarded("read artifacts of run " + std::to_string(run), [&](SQLite::Database& db) {
    SQLite::Statement q(db,
                        "SELECT id, run_id, kind, path, created_at, meta_json FROM artifacts "
                        "WHERE run_id = ?1 AND (?2 = '' OR kind = ?2) ORDER BY id");
    q.bind(1, static_cast<int64_t>(run));
    q.bind(2, kind);
    std::vector<ArtifactRecord> out;
    while (q.executeStep()) {
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getString(),
                     q.getColumn(3).getString(), q.getColumn(4).getDouble(), q.getColumn(5).getString()});
    }
    return out;
  });
}

// --- items ------------------------------------------------------------------------------------------

void RunStore::add_items(std::int64_t run, const std::string& task, const std::vector<std::pair<int, std::string>>& items) {
  if (items.empty()) return;
  for (const auto& [idx, payload] : items) require_json(payload, "payload of item " + std::to_string(idx) + " of " + task);
  live(impl_).guarded("add items of " + task + " to run " + std::to_string(run), [&](SQLite::Database& db) {
    auto tx = live(impl_).write_transaction();
    SQLite::Statement q(db, "INSERT OR REPLACE INTO items(run_id, task, idx, payload_json) VALUES(?,?,?,?)");
    for (const auto& [idx, payload] : items) {
      q.bind(1, static_cast<int64_t>(run));
      q.bind(2, task);
      q.bind(3, idx);
      q.bind(4, payload);
      q.exec();
      q.reset();
    }
    tx.commit();
  });
}

std::vector<ItemRecord> RunStore::items(std::int64_t run, const std::string& task) const {
  return live(impl_).guarded("read items of " + task + " of run " + std::to_string(run), [&](SQLite::Database& db) {
    SQLite::Statement q(db, "SELECT idx, payload_json FROM items WHERE run_id = ? AND task = ? ORDER BY idx");
    q.bind(1, static_cast<int64_t>(run));
    q.bind(2, task);
    std::vector<ItemRecord> out;
    while (q.executeStep()) out.push_back({q.getColumn(0).getInt(), q.getColumn(1).getString()});
    return out;
  });
}

}  // namespace moxlab
