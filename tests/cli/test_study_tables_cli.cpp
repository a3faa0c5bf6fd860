// The study tables under docs/reproduction/ are generated, never edited by hand: scripts/study_tables.sh
// regenerates every one from the committed study stores, and with --check fails, naming each, when a
// table differs from what the stores give (a store committed without its tables, a spec changed since).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tests/cli/cli_support.h"

using namespace moxlab::testing;
namespace fs = std::filesystem;

namespace {

const std::string src = MOXLAB_SOURCE_DIR;

std::string study_tables(const std::string& tree, const std::string& args) {
  return "B='" MOXLAB_CLI "' bash '" + tree + "/scripts/study_tables.sh' " + args;
}

}  // namespace

TEST_CASE("every shipped study table is what the committed study stores give", "[e2e][study_tables]") {
  const std::string dir = scratch_dir("study_tables_check");
  const int rc = shell(study_tables(src, "--check"), dir);
  INFO(file_text(dir + "/out") << file_text(dir + "/err"));
  CHECK(rc == 0);
  CHECK_THAT(file_text(dir + "/out"), Catch::Matchers::Contains("study tables under docs/reproduction are current"));
}

TEST_CASE("study_tables.sh --check names a stale table and leaves it and refuses a table without a spec",
          "[e2e][study_tables]") {
  // A copy of the layout the script reads: its scripts, the table specs and the micro store's export
  // (linked), and one shipped table edited by hand.
  const std::string tree = scratch_dir("study_tables_tree");
  fs::create_directories(tree + "/scripts");
  fs::create_directories(tree + "/experiments");
  fs::create_directories(tree + "/docs/reproduction/data");
  fs::create_directories(tree + "/docs/reproduction/study_micro");
  for (const char* script : {"study_tables.sh", "load_store.sh"})
    fs::copy_file(src + "/scripts/" + script, tree + "/scripts/" + script);
  fs::create_directory_symlink(src + "/experiments/tables", tree + "/experiments/tables");
  fs::create_directory_symlink(src + "/docs/reproduction/data/micro", tree + "/docs/reproduction/data/micro");
  const std::string table = tree + "/docs/reproduction/study_micro/study_micro_mohd_lr.md";
  std::ofstream(table) << "| edited by hand |\n";

  CHECK(shell(study_tables(tree, "--check"), tree) == 1);
  CHECK(file_text(tree + "/err") == "study_tables: not what the committed stores give: docs/reproduction/study_micro/"
                                     "study_micro_mohd_lr.md: run scripts/study_tables.sh\n");
  CHECK(file_text(table) == "| edited by hand |\n");

  REQUIRE(shell(study_tables(tree, ""), tree) == 0);
  CHECK(file_text(table) == file_text(src + "/docs/reproduction/study_micro/study_micro_mohd_lr.md"));
  CHECK(shell(study_tables(tree, "--check"), tree) == 0);

  std::ofstream(tree + "/docs/reproduction/study_micro/study_nothing.md") << "| no spec |\n";
  CHECK(shell(study_tables(tree, "--check"), tree) == 1);
  CHECK(file_text(tree + "/err") == "study_tables: docs/reproduction/study_micro/study_nothing.md has no table spec "
                                     "(experiments/tables/study_nothing.toml)\n");
}
