#include "core/common/process_probe.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace moxlab {

namespace {

// The fields of /proc/<pid>/stat after the command name, which is in parentheses and may hold spaces:
// fields[0] is the state (field 3), fields[19] the start time in clock ticks after boot (field 22).
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  std::vector<std::string> fields;
  if (paren == std::string::npos) return fields;
  std::istringstream rest(line.substr(paren + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

std::optional<double> boot_time() {
  std::ifstream stat("/proc/stat");
  for (std::string key; stat >> key;) {
    if (key == "btime") {
      double t = 0;
      if (stat >> t) return t;
      return std::nullopt;
    }
    stat.ignore(1 << 20, '\n');
  }
  return std::nullopt;
}

}  // namespace

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

bool process_alive(pid_t pid) {
  if (pid <= 0) return false;
  // kill(pid, 0) probes existence without signalling; EPERM means it exists under another user.
  if (::kill(pid, 0) != 0) return errno != ESRCH;
  const auto fields = stat_fields(pid);
  return fields.empty() || fields[0] != "Z";
}

std::optional<double> process_start_time(pid_t pid) {
  const auto fields = stat_fields(pid);
  const auto boot = boot_time();
  const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
  if (fields.size() < 20 || !boot || ticks_per_s <= 0) return std::nullopt;
  try {
    return *boot + std::stod(fields[19]) / static_cast<double>(ticks_per_s);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace moxlab
