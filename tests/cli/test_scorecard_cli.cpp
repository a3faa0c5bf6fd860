// The scorecard at the top of docs/reproduction/README.md is generated, never edited by hand: this test
// regenerates it from the committed study stores (scripts/scorecard.sh --check) and fails when a store was
// committed without it; a stale block is a one-line error naming the file.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "tests/cli/cli_support.h"

using namespace moxlab::testing;

TEST_CASE("the README's scorecard is what the committed study stores give", "[e2e][scorecard]") {
  const std::string src = MOXLAB_SOURCE_DIR, dir = scratch_dir("scorecard_check");
  const std::string cmd = "B='" MOXLAB_CLI "' bash '" + src + "/scripts/scorecard.sh' --check > '" + dir + "/out' 2> '" + dir + "/err'";
  const int rc = std::system(cmd.c_str());
  INFO(file_text(dir + "/out") << file_text(dir + "/err"));
  CHECK(rc == 0);
  CHECK_THAT(file_text(dir + "/out"), Catch::Matchers::Contains("is current"));
}

TEST_CASE("scorecard --check fails on a block the stores do not give, and writes nothing", "[e2e][scorecard]") {
  const std::string dir = scratch_dir("scorecard_stale");
  // A claim whose store is not committed yet: a pending row, whatever the machine holds.
  std::ofstream(dir + "/claims.toml") << "[[claim]]\npaper = \"MoHD\"\nclaim = \"c\"\npaper_number = \"+1\"\nstore = \"absent.db\"\n"
                                         "sweep = \"s\"\nmethod = \"m\"\nreference = \"dense\"\ndirection = \"lower\"\n";
  std::ofstream(dir + "/README.md") << "# r\n<!-- scorecard:begin -->\n| edited by hand |\n<!-- scorecard:end -->\n";
  const CliResult stale = run_cli("scorecard claims.toml --check README.md", dir);
  CHECK(one_line_error(stale, "the scorecard in README.md is not what the stores in . give: run scripts/scorecard.sh"));
  CHECK_THAT(file_text(dir + "/README.md"), Catch::Matchers::Contains("| edited by hand |"));
  REQUIRE(run_cli("scorecard claims.toml --insert README.md", dir).exit_code == 0);
  CHECK(run_cli("scorecard claims.toml --check README.md", dir).exit_code == 0);
  CHECK_THAT(file_text(dir + "/README.md"), Catch::Matchers::Contains("pending"));
}
