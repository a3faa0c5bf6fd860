// Translation of SQLiteCpp exceptions into moxlab::Error one-liners that name the database file.
// Internal to core/store: callers of RunStore only ever see moxlab::Error.
#pragma once
#include <string>

#include <SQLiteCpp/Exception.h>

#include "core/common/error.h"

namespace moxlab {

// `action` completes "cannot <action> in run store <path>", e.g. "log metrics for run 3".
// Busy/locked becomes exactly "database is locked: <path>" so callers and scripts can match on it.
// Busy or locked: RunStoreBusy.
Error sqlite_error(const SQLite::Exception& e, const std::string& path, const std::string& action);

// Whether SQLite answered busy or locked (another connection holds the lock).
bool is_busy(const SQLite::Exception& e);

// Throws sqlite_error(e, path, action), as RunStoreBusy when busy.
[[noreturn]] void throw_sqlite_error(const SQLite::Exception& e, const std::string& path, const std::string& action);

}  // namespace moxlab
