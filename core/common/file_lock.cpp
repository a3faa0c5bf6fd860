#include "core/common/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/common/error.h"

namespace moxlab {

FileLock::FileLock(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  require(fd_ >= 0, "cannot open lock file " + path + ": " + std::strerror(errno));
  int rc;
  do rc = ::flock(fd_, LOCK_EX); while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw Error("cannot lock " + path + ": " + why);
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
}

}  // namespace moxlab
