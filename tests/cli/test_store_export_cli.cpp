// A committed study store (docs/reproduction/data/NAME/: scripts/export_store.sh writes it,
// scripts/load_store.sh reads it) is the only copy of a study once its machine is gone: loading it and
// exporting again must give the committed parts byte for byte (every value read back exactly, rows in
// their order), and a bad or partial input must fail without leaving a store behind.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/cli/cli_support.h"

using namespace moxlab::testing;
namespace fs = std::filesystem;

namespace {

// Checks that every part in expected is in actual with the same bytes; returns how many parts it compared.
std::size_t check_same_parts(const std::string& expected, const std::string& actual) {
  std::size_t parts = 0;
  for (const auto& entry : fs::directory_iterator(expected)) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    const bool same_bytes = file_text(actual + "/" + name) == file_text(entry.path().string());
    CHECK(same_bytes);  // compared as a flag: the parts are binary
    ++parts;
  }
  return parts;
}

const std::string src = MOXLAB_SOURCE_DIR;
const std::string committed = src + "/docs/reproduction/data/form_equivalence_ccbb815";

}  // namespace

TEST_CASE("a committed store loads and exports back to the same bytes", "[e2e][store]") {
  const std::string dir = scratch_dir("store_roundtrip");
  REQUIRE(fs::exists(committed + "/head.sql.xz"));
  REQUIRE(shell("bash '" + src + "/scripts/load_store.sh' '" + committed + "' fe.db", dir) == 0);
  INFO(file_text(dir + "/err"));
  REQUIRE(shell("bash '" + src + "/scripts/export_store.sh' '" + dir + "/fe.db' '" + dir + "/parts'", dir) == 0);
  const std::size_t parts = check_same_parts(committed, dir + "/parts");
  CHECK(parts >= 2);  // the head and at least one range of runs
  CHECK(std::distance(fs::directory_iterator(dir + "/parts"), fs::directory_iterator{}) == static_cast<long>(parts));
}

TEST_CASE("load_store refuses an existing store, a folder without a head and a damaged part", "[e2e][store]") {
  const std::string dir = scratch_dir("store_bad_input");
  const std::string load = "bash '" + src + "/scripts/load_store.sh' ";
  std::ofstream(dir + "/kept.db") << "not overwritten";
  CHECK(shell(load + "'" + committed + "' kept.db", dir) != 0);
  CHECK(file_text(dir + "/err") == "load_store: kept.db exists; not overwriting it\n");
  CHECK(file_text(dir + "/kept.db") == "not overwritten");

  fs::create_directories(dir + "/empty");
  CHECK(shell(load + "empty new.db", dir) != 0);
  CHECK(file_text(dir + "/err") == "load_store: empty holds no exported store (no head.sql.xz)\n");
  CHECK_FALSE(fs::exists(dir + "/new.db"));

  // A run part cut short (a copy interrupted mid-file): xz fails, the transaction never commits and no
  // store appears under the name asked for.
  fs::create_directories(dir + "/cut");
  for (const auto& entry : fs::directory_iterator(committed)) fs::copy_file(entry.path(), dir + "/cut/" + entry.path().filename().string());
  const std::string part = dir + "/cut/runs-00001-00010.sql.xz";
  fs::resize_file(part, fs::file_size(part) / 2);
  CHECK(shell(load + "cut new.db", dir) != 0);
  CHECK_FALSE(fs::exists(dir + "/new.db"));
}

TEST_CASE("zero-shot items are exported one run a part and load back with the rest", "[e2e][store]") {
  const std::string dir = scratch_dir("store_items");
  REQUIRE(shell("bash '" + src + "/scripts/load_store.sh' '" + committed + "' fe.db", dir) == 0);
  // Two scored items of the store's first run, written the way `moxlab eval` writes them.
  REQUIRE(shell("sqlite3 fe.db \"INSERT INTO items VALUES((SELECT min(id) FROM runs), 'piqa', 0, "
                "'{\\\"loglik\\\":[-1.5,-2.25],\\\"gold\\\":0}'), ((SELECT min(id) FROM runs), 'piqa', 1, "
                "'{\\\"loglik\\\":[-0.125,-3.0],\\\"gold\\\":1}')\" && sqlite3 fe.db 'SELECT min(id) FROM runs'",
                dir) == 0);
  const std::string run = std::to_string(std::stoi(file_text(dir + "/out")));
  char name[32];
  std::snprintf(name, sizeof name, "items-%05d.sql.xz", std::stoi(run));
  REQUIRE(shell("bash '" + src + "/scripts/export_store.sh' '" + dir + "/fe.db' '" + dir + "/parts'", dir) == 0);
  INFO(file_text(dir + "/err"));
  CHECK(fs::exists(dir + "/parts/" + name));
  // The run ranges keep exactly their committed bytes: the items are in their own part, not in a range.
  check_same_parts(committed, dir + "/parts");
  REQUIRE(shell("bash '" + src + "/scripts/load_store.sh' parts back.db && sqlite3 back.db "
                "\"SELECT run_id, task, idx, payload_json FROM items ORDER BY idx\"",
                dir) == 0);
  CHECK(file_text(dir + "/out") == run + "|piqa|0|{\"loglik\":[-1.5,-2.25],\"gold\":0}\n" + run +
                                      "|piqa|1|{\"loglik\":[-0.125,-3.0],\"gold\":1}\n");
  REQUIRE(shell("bash '" + src + "/scripts/export_store.sh' '" + dir + "/back.db' '" + dir + "/again'", dir) == 0);
  check_same_parts(dir + "/parts", dir + "/again");
}
