// The calibration readings. Their SQL is checked against values computed by hand:
// scripts/temperature_pairs.sql reads scripts/temperature_scan.sh's TSV: per pair of variants, the paired
// difference of validation loss at temperature 1 and at each run's best temperature, with its 95%
// t-interval; stories260K (one model, whatever the seed) pairs with every seed.
// scripts/temperature_holdout.sql reads scripts/temperature_holdout.sh's: the second half's loss at the
// temperature chosen on the first. Both scripts are run on a freshly trained micro model.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/cli/cli_support.h"

using namespace moxlab::testing;

namespace {

// Trains the micro model of write_micro_config (30 steps) in dir (the calibration scripts run from the
// source tree: its paths absolute).
void train_micro_for_scripts(const std::string& dir) {
  write_micro_config_for_scripts(dir, 30);
  REQUIRE(run_cli("train --config micro.toml", dir).exit_code == 0);
}

// The rows of a TSV file after its header line (returned in `header`), split at tabs.
std::vector<std::vector<std::string>> tsv_rows(const std::string& path, std::string& header) {
  std::istringstream tsv(file_text(path));
  std::getline(tsv, header);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(tsv, line);) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) fields.push_back(cell);
    rows.push_back(fields);
  }
  return rows;
}

// Runs scripts/SCRIPT on dir/TSV imported as TABLE (the command line the scripts' headers give, '|'
// between columns) and returns what it printed.
std::string run_sql(const std::string& dir, const std::string& tsv, const std::string& table, const std::string& script) {
  const int status = shell("sqlite3 :memory: -cmd '.mode tabs' -cmd '.import " + tsv + " " + table + "' -cmd '.mode list' < '" +
                               std::string(MOXLAB_SOURCE_DIR) + "/scripts/" + script + "'",
                           dir);
  INFO(file_text(dir + "/err"));
  REQUIRE(status == 0);
  return file_text(dir + "/out");
}

}  // namespace

TEST_CASE("temperature_pairs.sql: paired intervals at temperature 1 and at each run's best", "[e2e][calibration]") {
  const std::string dir = scratch_dir("temperature_pairs");
  std::ofstream tsv(dir + "/scan.tsv");
  tsv << "run\tvariant\tseed\tstore_loss\tretrained_as\ttemperature\tloss\tentropy\n";
  struct Run {
    int id;
    const char* variant;
    int seed;
    double at_one, at_two;
  };
  const Run runs[] = {{1, "tomoe_70", 1, 5.0, 4.5},         {2, "tomoe_70", 2, 5.1, 4.6},         {3, "tomoe_70", 3, 5.2, 4.7},
                      {4, "tomoe_70_e1", 1, 4.8, 4.6},      {5, "tomoe_70_e1", 2, 5.0, 4.65},     {6, "tomoe_70_e1", 3, 4.9, 4.75},
                      {7, "dense", 1, 4.6, 3.9},            {8, "taylor_70_distill", 2, 4.5, 4.0}, {9, "taylor_70_distill", 3, 4.4, 4.1}};
  for (const Run& r : runs)
    tsv << r.id << '\t' << r.variant << '\t' << r.seed << "\t0\t-\t1\t" << r.at_one << "\t3\n"
        << r.id << '\t' << r.variant << '\t' << r.seed << "\t0\t-\t2\t" << r.at_two << "\t4\n";
  tsv.close();
  const std::string out = run_sql(dir, "scan.tsv", "scan", "temperature_pairs.sql");
  INFO(out);
  // one expert - ToMoE at 1: -0.2, -0.1, -0.3: mean -0.2, sd 0.1, 4.303 * 0.1 / sqrt(3) = 0.248.
  // At the best temperature (2 for all but e1 seed 1, whose 4.6 is at 2 too): +0.1, +0.05, +0.05:
  // mean 0.0667, sd 0.0289, half-width 4.303 * 0.0289 / sqrt(3) = 0.0717.
  CHECK_THAT(out, Catch::Matchers::Contains("70%|one expert - ToMoE|3|-0.200 [-0.448, +0.048]|+0.067 [-0.005, +0.138]|+0.100, +0.050, +0.050"));
  // Against stories260K (seed 1 only): seeds 2 and 3 pair with it; 12.706 * 0.0707 / sqrt(2) = 0.635.
  CHECK_THAT(out, Catch::Matchers::Contains("70%|Taylor + distillation - stories260K|2|-0.150 [-0.785, +0.485]|+0.150 [-0.485, +0.785]"));
  CHECK_THAT(out, Catch::Matchers::Contains("tomoe_70|3|5.100|3.000|4.600|2.0 2.0 2.0"));
  CHECK(out.find("50%") == std::string::npos);  // no rows of variants not scanned
}

TEST_CASE("temperature_holdout.sql: the second half's loss at the first half's best temperature", "[e2e][calibration]") {
  const std::string dir = scratch_dir("temperature_holdout");
  std::ofstream tsv(dir + "/holdout.tsv");
  tsv << "run\tvariant\tseed\ttemperature\tfirst_loss\tfirst_tokens\twhole_loss\twhole_tokens\n"
      // run 1, second half (NLL of the whole minus the first's, over 200 tokens): at 1 (1440 - 500) / 200 = 4.7,
      // at 2 (1380 - 450) / 200 = 4.65; the first half's best (2) is the second's too: cost 0.
      << "1\ta\t1\t1\t5.0\t100\t4.8\t300\n1\ta\t1\t2\t4.5\t100\t4.6\t300\n"
      // run 2: at 1 (1260 - 400) / 200 = 4.3, at 2 (1200 - 410) / 200 = 3.95; the first half picks 1: cost 0.35.
      << "2\tb\t1\t1\t4.0\t100\t4.2\t300\n2\tb\t1\t2\t4.1\t100\t4.0\t300\n"
      // run 3, a's one expert, seed 1: at 1 (1470 - 500) / 200 = 4.85, at 2 (1410 - 460) / 200 = 4.75; picks 2.
      << "3\ta_e1\t1\t1\t5.0\t100\t4.9\t300\n3\ta_e1\t1\t2\t4.6\t100\t4.7\t300\n"
      // run 4, a, seed 2: at 1 4.7, at 2 (1350 - 450) / 200 = 4.5; picks 2.
      << "4\ta\t2\t1\t5.0\t100\t4.8\t300\n4\ta\t2\t2\t4.5\t100\t4.5\t300\n"
      // run 5, a_e1, seed 2: at 1 4.85, at 2 (1440 - 460) / 200 = 4.9; picks 2, cost 0.05.
      << "5\ta_e1\t2\t1\t5.0\t100\t4.9\t300\n5\ta_e1\t2\t2\t4.6\t100\t4.8\t300\n";
  tsv.close();
  const std::string out = run_sql(dir, "holdout.tsv", "holdout", "temperature_holdout.sql");
  INFO(out);
  CHECK_THAT(out, Catch::Matchers::Contains("1|a|1|2.0|2.0|4.7000|4.6500|4.6500|0.0000"));
  CHECK_THAT(out, Catch::Matchers::Contains("2|b|1|1.0|2.0|4.3000|4.3000|3.9500|0.3500"));
  CHECK_THAT(out, Catch::Matchers::Contains("5|a_e1|2|2.0|1.0|4.8500|4.9000|4.8500|0.0500"));
  CHECK_THAT(out, Catch::Matchers::Contains("5|0.3500|0.0800|3"));  // runs, largest and mean cost, same choice
  // a_e1 - a per seed at each one's first-half choice: 4.75 - 4.65 = +0.10, 4.9 - 4.5 = +0.40; mean 0.25,
  // sd 0.2121, se 0.15, t(1) 12.706: [-1.656, +2.156].
  CHECK_THAT(out, Catch::Matchers::Contains("a_e1 - a|2|+0.250 [-1.656, +2.156]|+0.100, +0.400"));
}

TEST_CASE("temperature_holdout.sh scores a run's half and whole at each temperature, the study store untouched", "[e2e][calibration]") {
  const std::string src = MOXLAB_SOURCE_DIR, dir = scratch_dir("temperature_holdout_sh");
  train_micro_for_scripts(dir);
  const std::string store = dir + "/runs/runs.db";
  const std::string before = file_text(store);
  const std::string script = "MOXLAB='" MOXLAB_CLI "' MAX_VAL_TOKENS=2048 TEMPERATURES='1 2' bash '" + src +
                             "/scripts/temperature_holdout.sh' '" + store + "' '" + dir + "/holdout.tsv' ";
  REQUIRE(shell(script + "1", dir) == 0);
  INFO(file_text(dir + "/err"));
  CHECK(file_text(store) == before);
  std::string header;
  const auto rows = tsv_rows(dir + "/holdout.tsv", header);
  CHECK(header == "run\tvariant\tseed\ttemperature\tfirst_loss\tfirst_tokens\twhole_loss\twhole_tokens");
  for (const auto& r : rows) REQUIRE(r.size() == 8);
  REQUIRE(rows.size() == 2);
  CHECK(std::stod(rows[0][3]) == 1.0);
  CHECK(std::stod(rows[1][3]) == 2.0);
  for (const auto& r : rows) {
    CHECK(r[0] == "1");
    // Up to 1024 tokens per domain, then up to 2048: the half is about half of the whole.
    const double first = std::stod(r[5]), whole = std::stod(r[7]);
    CHECK(first > 0.45 * whole);
    CHECK(first < 0.55 * whole);
    CHECK(std::stod(r[4]) > 0);
  }
  CHECK(rows[0][6] != rows[1][6]);  // temperature 2 scores other losses
  CHECK(shell(script + "7", dir) == 1);
  CHECK(file_text(dir + "/err").find("run 7 is not a finished run") != std::string::npos);
}

TEST_CASE("temperature_scan.sh scores a run at each temperature, resumes, and leaves the study store untouched", "[e2e][calibration]") {
  const std::string src = MOXLAB_SOURCE_DIR, dir = scratch_dir("temperature_scan_sh");
  train_micro_for_scripts(dir);
  // The study runs' final evaluation, on the tokens the scan will score.
  REQUIRE(run_cli("eval --run 1 --tasks none --no-wikitext --max-val-tokens 2048", dir).exit_code == 0);
  const std::string store = dir + "/runs/runs.db";
  const std::string before = file_text(store);
  const std::string script = "MOXLAB='" MOXLAB_CLI "' MAX_VAL_TOKENS=2048 TEMPERATURES='1 2' bash '" + src +
                             "/scripts/temperature_scan.sh' '" + store + "' ";
  REQUIRE(shell(script + "'" + dir + "/scan.tsv' 1", dir) == 0);
  INFO(file_text(dir + "/err"));
  CHECK(file_text(store) == before);
  CHECK(!std::ifstream(dir + "/scan.tsv.partial"));  // moved to OUT once every run is done
  std::string header;
  const auto rows = tsv_rows(dir + "/scan.tsv", header);
  CHECK(header == "run\tvariant\tseed\tstore_loss\tretrained_as\ttemperature\tloss\tentropy");
  REQUIRE(rows.size() == 2);
  REQUIRE(shell("sqlite3 '" + store + "' \"select value from results where run_id = 1 and key = 'loss/val/all'\"", dir) == 0);
  const double store_loss = std::stod(file_text(dir + "/out"));
  for (const auto& r : rows) {
    REQUIRE(r.size() == 8);
    CHECK(r[0] == "1");
    CHECK(std::stod(r[3]) == Approx(store_loss).epsilon(1e-9));
    CHECK(r[4] == "-");  // its checkpoint is here: not trained again
    CHECK(std::stod(r[6]) > 0);
  }
  CHECK(std::abs(std::stod(rows[0][6]) - store_loss) < 1e-4);  // at temperature 1 the store's own loss
  CHECK(std::stod(rows[0][5]) == 1.0);
  CHECK(std::stod(rows[1][5]) == 2.0);
  // Hotter logits spread the predictive distribution: higher entropy.
  CHECK(std::stod(rows[1][7]) > std::stod(rows[0][7]));

  // A run already in OUT.partial (an interrupted scan) is not scanned again.
  const std::string partial = "run\tvariant\tseed\tstore_loss\tretrained_as\ttemperature\tloss\tentropy\n"
                              "1\t\t1\t9\t-\t1\t9.5\t1\n";
  std::ofstream(dir + "/resumed.tsv.partial") << partial;
  REQUIRE(shell(script + "'" + dir + "/resumed.tsv' 1", dir) == 0);
  CHECK(file_text(dir + "/resumed.tsv") == partial);

  CHECK(shell(script + "'" + dir + "/bad.tsv' 7", dir) == 1);
  CHECK(file_text(dir + "/err").find("run 7 is not a finished run") != std::string::npos);
  // A run whose checkpoint is gone is trained again from its sweep member; a lone run has none.
  REQUIRE(shell("rm \"$(sqlite3 '" + store + "' \"select path from artifacts where run_id = 1 and kind = 'checkpoint'\")\"", dir) == 0);
  CHECK(shell(script + "'" + dir + "/gone.tsv' 1", dir) == 1);
  CHECK(file_text(dir + "/err").find("run 1 has no checkpoint and no sweep member") != std::string::npos);
  CHECK(file_text(store) == before);
}
