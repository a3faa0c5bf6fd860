// An exclusive advisory lock on a file (flock), held for the lifetime of the object. Used where
// several processes (sweep workers, Slurm array tasks) may build the same cached artefact at once:
// the first builds it, the others wait and then find it built.
#pragma once
#include <string>

namespace moxlab {

class FileLock {
 public:
  // Creates the lock file if needed and blocks until the lock is ours. Error naming the file on failure.
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace moxlab
