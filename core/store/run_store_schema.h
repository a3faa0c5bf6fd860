// The run store's SQLite schema: created idempotently, versioned through meta.schema_version.
// Internal to core/store (RunStore calls it when opening); documented here for people reading the
// database with sqlite3 or pandas.
#pragma once
#include <string>

namespace SQLite {
class Database;
}

namespace moxlab {

// Bump when the tables change, and teach ensure_run_store_schema to migrate the older version.
constexpr int kRunStoreSchemaVersion = 3;  // 2: sweep member config and worker state; 3: run worker and heartbeat

// meta.schema_version of an open database, 0 when the schema has not been created yet.
int run_store_schema_version(SQLite::Database& db);

// Creates missing tables and indexes and records the schema version. Cheap when the schema is current
// (one read, no write lock), so every worker process can call it on open. Throws Error when the file
// was written by a newer moxlab; SQLite failures propagate as SQLite::Exception.
void ensure_run_store_schema(SQLite::Database& db, const std::string& path);

}  // namespace moxlab
