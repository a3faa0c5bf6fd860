// moxlab's one error type. Every user-facing failure (bad config, missing file, corrupt checkpoint,
// truncated HDF5, locked database) is thrown as a moxlab::Error carrying a single line that names the
// problem; the CLI prints it as "moxlab: error: <what>" and exits non-zero.
#pragma once
#include <stdexcept>
#include <string>

namespace moxlab {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Throws Error(message) when cond is false. For validating user input, not for internal invariants.
inline void require(bool cond, const std::string& message) {
  if (!cond) throw Error(message);
}

}  // namespace moxlab
