// A run store in a directory the reader cannot write (an archive, another user's runs) opens
// read-only: SQLite cannot create the WAL index (-shm) there, so the store falls back to reading the
// file as immutable. Tests run as root, whom permissions do not stop, so the reader runs as nobody.
#include <catch2/catch.hpp>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "core/store/run_store.h"
#include "tests/scratch_dir.h"

using namespace moxlab;

namespace {

// Whether an unprivileged reader lists the store's one run: as nobody in a child process when this
// is root, as this user otherwise (after the directory and file were made read-only).
bool unprivileged_reader_lists_runs(const std::string& path) {
  auto read = [&] {
    RunStoreOptions ro;
    ro.read_only = true;
    RunStore store(path, ro);
    return store.list_runs().size() == 1 && store.get_run(1).name == "archived";
  };
  if (::geteuid() != 0) {
    try {
      return read();
    } catch (const std::exception& e) {
      UNSCOPED_INFO(e.what());
      return false;
    }
  }
  const passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) ::_exit(3);
    try {
      ::_exit(read() ? 0 : 1);
    } catch (...) {
      ::_exit(2);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  UNSCOPED_INFO("reader exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << " (2: cannot open)");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("a store in a read-only directory is read by a reader that cannot create its WAL index", "[store][read_only]") {
  testing::ScratchDir dir("read-only");
  const std::string sub = dir.file("archive");
  std::filesystem::create_directories(sub);
  const std::string path = sub + "/runs.db";
  {
    RunStore store(path);
    RunRecord r;
    r.name = "archived";
    r.status = RunStatus::finished;
    store.create_run(r);
  }  // closing the last connection folds the WAL into the file and removes -wal and -shm
  REQUIRE_FALSE(std::filesystem::exists(path + "-shm"));
  ::chmod(path.c_str(), 0444);
  ::chmod(sub.c_str(), 0555);
  CHECK(unprivileged_reader_lists_runs(path));
  CHECK_FALSE(std::filesystem::exists(path + "-shm"));  // nothing was written next to it
  ::chmod(sub.c_str(), 0755);  // let the scratch folder be removed
}
