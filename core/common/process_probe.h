// Whether a process of this host still lives, for state left behind by processes that may have died
// (a run's worker, the writer of a checkpoint's temporary file).
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>

namespace moxlab {

// This machine's host name ("" when it cannot be read).
std::string host_name();

// False when no process has this pid, or when it is a zombie: it exited and will never write again,
// but stays visible to kill() until reaped (in containers PID 1 often never reaps). A process of
// another user counts as alive.
bool process_alive(pid_t pid);

// When the process started, in Unix seconds (from /proc/<pid>/stat and the boot time in /proc/stat;
// about a second of precision). nullopt when unknown.
std::optional<double> process_start_time(pid_t pid);

}  // namespace moxlab
