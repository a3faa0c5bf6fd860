// core/common: SHA-256 against FIPS 180-4 test vectors; atomic writes never leave torn files; a file
// lock serialises processes; the binary knows the git revision it was built from.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/common/atomic_file.h"
#include "core/common/build_revision.h"
#include "core/common/error.h"
#include "core/common/paths.h"
#include "core/common/file_lock.h"
#include "core/common/sha256.h"
#include "tests/scratch_dir.h"

using namespace moxlab;

TEST_CASE("SHA-256 matches the standard test vectors", "[common]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 s;  // streaming in odd-sized pieces gives the same digest
  const std::string million(1000000, 'a');
  for (std::size_t i = 0; i < million.size(); i += 997) s.update(million.substr(i, 997));
  CHECK(s.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("Atomic writes replace whole files and keep the old one when writing fails", "[common]") {
  auto dir = std::filesystem::temp_directory_path() / "moxlab_tests" / "atomic";
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "f.txt").string();
  write_text_atomically(path, "one");
  CHECK(read_file(path) == "one");
  CHECK_THROWS(write_file_atomically(path, [](const std::string& tmp) {
    write_text_atomically(tmp, "partial");
    throw Error("boom");
  }));
  CHECK(read_file(path) == "one");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 1);  // no temporaries left behind
  CHECK_THROWS_AS(read_file((dir / "missing").string()), Error);
}

TEST_CASE("FileLock makes a second process wait until the first releases it", "[common][lock]") {
  testing::ScratchDir dir("file-lock");
  const std::string lock = dir.file("build.lock"), marker = dir.file("built");
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    FileLock held(lock);
    char c = 1;
    (void)!::write(ready[1], &c, 1);  // tell the parent the lock is taken
    ::usleep(300000);
    std::ofstream(marker) << "done";  // the work the lock guards
    ::_exit(0);
  }
  char c;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  {
    FileLock mine(lock);  // blocks until the child exits (closing its descriptor releases the lock)
    CHECK(std::filesystem::exists(marker));
  }
  ::waitpid(child, nullptr, 0);
  CHECK_THROWS_WITH(FileLock(dir.file("no/such/dir/x.lock")), Catch::Matchers::Contains("cannot open lock file"));
}

TEST_CASE("The build's git revision is a commit of the source tree, captured at build time", "[common]") {
  // HEAD may have moved since the build (commit, then test), so check that the recorded revision is a
  // real commit of this repository rather than that it equals HEAD.
  auto run = [](const std::string& cmd) {
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[128];
      while (std::fgets(buf, sizeof(buf), p)) out += buf;
      if (::pclose(p) != 0) return std::string();
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  };
  const std::string src = "git -C '" + moxlab::source_dir() + "' ";
  const std::string rev = moxlab::build_git_revision();
  if (run(src + "rev-parse HEAD 2>/dev/null").empty()) {
    CHECK(rev == "unknown");
    return;
  }
  REQUIRE(rev.size() >= 40);
  const std::string hash = rev.substr(0, 40);
  CHECK(hash.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK((rev.size() == 40 || rev.substr(40) == "+dirty"));
  CHECK(run(src + "cat-file -t " + hash + " 2>/dev/null") == "commit");
}
