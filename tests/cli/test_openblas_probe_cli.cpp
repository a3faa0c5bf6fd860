// scripts/openblas_probe.sh: a finished sweep member trained again under named OpenBLAS kernels, its
// logged metrics compared with the store's to the last digit. A MoH member (its router multiplies
// through OpenBLAS) trained on the generic Prescott kernels comes back equal on them; the study store
// is only read and the probe's run folders are removed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/cli_support.h"

using namespace moxlab::testing;

TEST_CASE("openblas_probe.sh gives back a member trained on the kernels it names", "[e2e][openblas]") {
  const std::string src = MOXLAB_SOURCE_DIR, dir = scratch_dir("openblas_probe");
  write_micro_config_for_scripts(dir, 40);
  std::ofstream(dir + "/sweep.toml") << "name = \"probe\"\nbase = \"micro.toml\"\nmode = \"list\"\n"
                                        "[[member]]\nset = [\"model.attention=moh\", \"moh.shared=1\", \"moh.active=3\"]\n";
  const CliResult plan = run_cli("sweep plan sweep.toml", dir);
  REQUIRE(plan.exit_code == 0);
  const std::string id = std::to_string(std::stoll(plan.out));
  REQUIRE(shell("OPENBLAS_CORETYPE=Prescott '" MOXLAB_CLI "' sweep run " + id + " --index 0 --threads 1", dir) == 0);
  const std::string store = dir + "/runs/runs.db";
  const std::string before = file_text(store);
  const std::string probe = "MOXLAB='" MOXLAB_CLI "' bash '" + src + "/scripts/openblas_probe.sh' '" + store + "' ";

  REQUIRE(shell(probe + id + ":0 20 Prescott", dir) == 0);
  INFO(file_text(dir + "/err"));
  const std::string out = file_text(dir + "/out");
  // Every metric the member logged to step 20 (train loss, grad norm, lr, tokens at steps 10 and 20, the
  // periodic validation at step 13), timing aside.
  REQUIRE(shell("sqlite3 '" + store + "' \"select count(*) from metrics where step <= 20 and key != 'train/tokens_per_s'\"", dir) == 0);
  const int logged = std::stoi(file_text(dir + "/out"));
  CHECK(logged > 20);
  CHECK(out == "Prescott: equal, " + std::to_string(logged) + " values to step 20\n");
  CHECK(file_text(store) == before);
  std::size_t folders = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/runs")) folders += e.is_directory();
  CHECK(folders == 1);  // the member's own

  // Past step 39 is the run's last logged step, 40: the training has (almost always) ended by the time the probe looks.
  CHECK(shell(probe + id + ":0 39 Prescott", dir) == 0);
  CHECK(file_text(dir + "/out").rfind("Prescott: equal, ", 0) == 0);

  // A store whose run logged another train loss at step 20 (by one part in a million) is told apart.
  const std::string altered = dir + "/altered.db";
  REQUIRE(shell("cp '" + store + "' '" + altered + "' && sqlite3 '" + altered +
                    "' \"update metrics set value = value * (1 + 1e-6) where step = 20 and key = 'train/loss'\"",
                dir) == 0);
  REQUIRE(shell("MOXLAB='" MOXLAB_CLI "' bash '" + src + "/scripts/openblas_probe.sh' '" + altered + "' " + id + ":0 20 Prescott", dir) == 0);
  CHECK(file_text(dir + "/out") == "Prescott: differs from step 20 (train/loss)\n");

  CHECK(shell(probe + id + ":1 20 Prescott", dir) == 1);
  CHECK(file_text(dir + "/err").find("member " + id + ":1 of " + store + " is not finished") != std::string::npos);
  CHECK(shell(probe + id + ":0 x Prescott", dir) == 2);
  CHECK(file_text(dir + "/err").find("STEPS 'x' is not a positive number") != std::string::npos);
  CHECK(shell(probe + id + ":0 20", dir) == 2);
}
