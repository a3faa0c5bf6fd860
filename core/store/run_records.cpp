// Run status words: the single place where the enum meets its stored spelling.
#include "core/store/run_records.h"

#include "core/common/error.h"

namespace moxlab {

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::pending: return "pending";
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::failed: return "failed";
    case RunStatus::killed: return "killed";
  }
  return "pending";  // unreachable; keeps -Wreturn-type quiet
}

RunStatus parse_run_status(const std::string& word) {
  for (RunStatus s : {RunStatus::pending, RunStatus::running, RunStatus::finished, RunStatus::failed,
                      RunStatus::killed}) {
    if (word == to_string(s)) return s;
  }
  throw Error("unknown run status '" + word + "' (expected pending, running, finished, failed or killed)");
}

bool is_terminal(RunStatus status) {
  return status == RunStatus::finished || status == RunStatus::failed || status == RunStatus::killed;
}

}  // namespace moxlab
