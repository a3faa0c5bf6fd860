// Tables of the run store. Column types are plain SQLite types so sqlite3 and pandas read them as is:
// times are Unix seconds (REAL), JSON columns are TEXT, and metric/result values are REAL where NULL
// stands for NaN (SQLite stores a bound NaN as NULL; RunStore maps it back).
#include "core/store/run_store_schema.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/common/error.h"

namespace moxlab {

namespace {

const char* const kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS meta(
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS sweeps(
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL DEFAULT '',
  spec_json  TEXT NOT NULL DEFAULT '{}',
  created_at REAL NOT NULL);

CREATE TABLE IF NOT EXISTS runs(
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL DEFAULT '',
  kind        TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL DEFAULT 'pending'
              CHECK(status IN ('pending','running','finished','failed','killed')),
  config_json TEXT NOT NULL DEFAULT '{}',
  config_hash TEXT NOT NULL DEFAULT '',
  seed        INTEGER NOT NULL DEFAULT 0,
  git_rev     TEXT NOT NULL DEFAULT '',
  data_digest TEXT NOT NULL DEFAULT '',
  host        TEXT NOT NULL DEFAULT '',
  error       TEXT NOT NULL DEFAULT '',
  created_at  REAL NOT NULL,
  started_at  REAL,
  finished_at REAL,
  parent_run  INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  sweep_id    INTEGER REFERENCES sweeps(id) ON DELETE SET NULL,
  tags        TEXT NOT NULL DEFAULT '[]');
CREATE INDEX IF NOT EXISTS runs_by_name ON runs(name);
CREATE INDEX IF NOT EXISTS runs_by_sweep ON runs(sweep_id);

CREATE TABLE IF NOT EXISTS metrics(
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step      INTEGER NOT NULL,
  key       TEXT NOT NULL,
  value     REAL,
  wall_time REAL NOT NULL);
CREATE INDEX IF NOT EXISTS metrics_by_run_key_step ON metrics(run_id, key, step);

CREATE TABLE IF NOT EXISTS results(
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key       TEXT NOT NULL,
  value     REAL,
  meta_json TEXT NOT NULL DEFAULT '{}',
  UNIQUE(run_id, key));

CREATE TABLE IF NOT EXISTS artifacts(
  id         INTEGER PRIMARY KEY,
  run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind       TEXT NOT NULL,
  path       TEXT NOT NULL,
  created_at REAL NOT NULL,
  meta_json  TEXT NOT NULL DEFAULT '{}');
CREATE INDEX IF NOT EXISTS artifacts_by_run_kind ON artifacts(run_id, kind);

CREATE TABLE IF NOT EXISTS sweep_members(
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  idx      INTEGER NOT NULL,
  run_id   INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  status   TEXT NOT NULL DEFAULT 'pending',
  PRIMARY KEY(sweep_id, idx));
)sql";

// Version 2: sweep members carry their resolved config and the state a worker needs to take one over
// safely (who holds it, when it last showed life). Added with ALTER so version-1 stores migrate in place.
const char* const kSweepMemberColumnsV2[] = {
    "label TEXT NOT NULL DEFAULT ''",
    "config_json TEXT NOT NULL DEFAULT '{}'",
    "worker TEXT NOT NULL DEFAULT ''",
    "heartbeat REAL",
    "attempts INTEGER NOT NULL DEFAULT 0",
    "error TEXT NOT NULL DEFAULT ''",
    "started_at REAL",
    "finished_at REAL",
};

// Version 3: a running run records the process that holds it ("host:pid") and that process's
// heartbeat, so readers can tell a run whose process died from one still training (run_liveness.h).
const char* const kRunColumnsV3[] = {
    "worker TEXT NOT NULL DEFAULT ''",
    "heartbeat REAL",
};

const char* const kSchemaSqlTail = R"sql(

CREATE TABLE IF NOT EXISTS items(
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  task         TEXT NOT NULL,
  idx          INTEGER NOT NULL,
  payload_json TEXT NOT NULL,
  UNIQUE(run_id, task, idx));
)sql";

}  // namespace

int run_store_schema_version(SQLite::Database& db) {
  // Querying sqlite_master is also the first real read of the file, so a non-database fails here.
  if (!db.tableExists("meta")) return 0;
  SQLite::Statement q(db, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!q.executeStep()) return 0;
  return std::stoi(q.getColumn(0).getString());
}

void ensure_run_store_schema(SQLite::Database& db, const std::string& path) {
  auto check_not_newer = [&](int version) {
    require(version <= kRunStoreSchemaVersion,
            "run store " + path + " has schema version " + std::to_string(version) +
                " but this moxlab understands up to " + std::to_string(kRunStoreSchemaVersion) +
                "; use a newer moxlab");
  };
  int version = run_store_schema_version(db);
  check_not_newer(version);
  if (version == kRunStoreSchemaVersion) return;

  // IMMEDIATE takes the write lock up front; re-read inside, another worker may have won the race.
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  version = run_store_schema_version(db);
  check_not_newer(version);
  if (version == kRunStoreSchemaVersion) return;  // tx rolls back an empty transaction
  db.exec(kSchemaSql);
  // A version-0 file has just got the version-1 tables; each older version gains the later columns.
  if (version < 2)
    for (const char* column : kSweepMemberColumnsV2) db.exec(std::string("ALTER TABLE sweep_members ADD COLUMN ") + column);
  if (version < 3)
    for (const char* column : kRunColumnsV3) db.exec(std::string("ALTER TABLE runs ADD COLUMN ") + column);
  db.exec(kSchemaSqlTail);
  SQLite::Statement put(db, "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?)");
  put.bind(1, std::to_string(kRunStoreSchemaVersion));
  put.exec();
  tx.commit();
}

}  // namespace moxlab
