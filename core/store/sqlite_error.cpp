// See sqlite_error.h. The primary result code (low byte of the extended code) picks the message.
#include "core/store/sqlite_error.h"

#include <sqlite3.h>

#include "core/store/run_store.h"

namespace moxlab {

Error sqlite_error(const SQLite::Exception& e, const std::string& path, const std::string& action) {
  int code = e.getExtendedErrorCode();
  if (code < 0) code = e.getErrorCode();
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Error("database is locked: " + path);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Error("run store " + path + " is not a SQLite database or is corrupt");
    case SQLITE_CANTOPEN:
      return Error("cannot open run store " + path + ": " + e.what());
    case SQLITE_READONLY:
      return Error("cannot " + action + ": run store " + path + " is read-only");
    case SQLITE_FULL:
      return Error("cannot " + action + ": disk full writing run store " + path);
    default:
      return Error("cannot " + action + " in run store " + path + ": " + e.what());
  }
}

bool is_busy(const SQLite::Exception& e) {
  const int code = (e.getExtendedErrorCode() >= 0 ? e.getExtendedErrorCode() : e.getErrorCode()) & 0xff;
  return code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

void throw_sqlite_error(const SQLite::Exception& e, const std::string& path, const std::string& action) {
  if (is_busy(e)) throw RunStoreBusy(sqlite_error(e, path, action).what());
  throw sqlite_error(e, path, action);
}

}  // namespace moxlab
