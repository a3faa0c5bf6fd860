// Internals of RunStore shared by its translation units (run_store.cpp: runs, metrics, results,
// artifacts, items; run_store_sweeps.cpp: sweeps and their members). Not part of the public API.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/store/run_store.h"
#include "core/store/sqlite_error.h"

namespace moxlab {

struct RunStore::Impl {
  std::string path;
  RunStoreOptions options;
  std::unique_ptr<SQLite::Database> db;
  int schema_version = 0;  // of the file as opened (a read-only store is not migrated)
  mutable std::mutex mutex;

  // Runs f(db) under the mutex; SQLite and JSON failures become one-line Errors naming the file.
  template <class F>
  auto guarded(const std::string& action, F&& f) const -> decltype(f(*db)) {
    std::lock_guard<std::mutex> lock(mutex);
    try {
      return f(*db);
    } catch (const SQLite::Exception& e) {
      throw_sqlite_error(e, path, action);
    } catch (const nlohmann::json::exception& e) {
      throw Error("cannot " + action + " in run store " + path + ": malformed JSON column (" + e.what() + ")");
    }
  }

  SQLite::Transaction write_transaction() const {
    return SQLite::Transaction(*db, SQLite::TransactionBehavior::IMMEDIATE);
  }

  [[noreturn]] void no_run(std::int64_t run) const {
    throw Error("no run with id " + std::to_string(run) + " in " + path);
  }
};

namespace store_detail {

// The store's state, refusing a moved-from RunStore with an Error instead of a null dereference.
template <class P>
auto& live(const P& impl) {
  require(impl != nullptr, "run store was moved from");
  return *impl;
}

inline void require_json(const std::string& text, const std::string& what) {
  require(nlohmann::json::accept(text), what + " is not valid JSON: " + text.substr(0, 80));
}

// SQLite turns a bound NaN into NULL; map NULL back so diverged losses survive the round trip.
inline double real_or_nan(const SQLite::Column& c) {
  return c.isNull() ? std::numeric_limits<double>::quiet_NaN() : c.getDouble();
}

inline std::optional<double> optional_real(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getDouble();
}

inline std::optional<std::int64_t> optional_int(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

inline void bind_optional(SQLite::Statement& s, int index, const std::optional<double>& v) {
  if (v) s.bind(index, *v); else s.bind(index);
}

inline void bind_optional(SQLite::Statement& s, int index, const std::optional<std::int64_t>& v) {
  if (v) s.bind(index, static_cast<int64_t>(*v)); else s.bind(index);
}

}  // namespace store_detail
}  // namespace moxlab
