#include "core/common/paths.h"

#include <cstdlib>

#include "core/common/atomic_file.h"

namespace moxlab {

std::string shared_data_dir() {
  if (const char* env = std::getenv("MOXLAB_SHARED_DATA")) return file_exists(env) ? env : "";
  return file_exists(MOXLAB_SHARED_DATA) ? MOXLAB_SHARED_DATA : "";
}

std::string source_dir() {
  if (const char* env = std::getenv("MOXLAB_SOURCE_DIR")) return env;
  return MOXLAB_SOURCE_DIR;
}

}  // namespace moxlab
