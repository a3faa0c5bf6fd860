// A kill inside a checkpoint write leaves "<path>.tmp.<pid>"; the next start removes it unless its
// writer is still at work.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/common/atomic_file.h"
#include "tests/scratch_dir.h"

using namespace moxlab;

TEST_CASE("temporaries of dead writers are removed, a live writer's and other files are kept", "[common][atomic_file]") {
  testing::ScratchDir dir("orphans");
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string ck = dir.file("checkpoint.pt");
  const std::string dead_tmp = ck + ".tmp." + std::to_string(dead);
  const std::string live_tmp = ck + ".tmp." + std::to_string(::getpid());
  for (const std::string& f : {ck, dead_tmp, live_tmp, ck + ".tmp.notapid", dir.file("other.pt.tmp." + std::to_string(dead))})
    std::ofstream(f) << "x";

  const auto removed = remove_orphaned_temp_files(ck);
  CHECK(removed == std::vector<std::string>{dead_tmp});
  CHECK_FALSE(std::filesystem::exists(dead_tmp));
  CHECK(std::filesystem::exists(live_tmp));
  CHECK(std::filesystem::exists(ck));
  CHECK(std::filesystem::exists(ck + ".tmp.notapid"));
  CHECK(std::filesystem::exists(dir.file("other.pt.tmp." + std::to_string(dead))));
  CHECK(remove_orphaned_temp_files(dir.file("missing/checkpoint.pt")).empty());
}
