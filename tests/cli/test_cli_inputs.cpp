// Values on the moxlab command line are checked where they are parsed: a config path that is not a
// regular file, numbers that are not numbers, not finite or out of range, and run ids that cannot be
// ids each fail with one line naming the flag, before any work starts (so none needs a real checkpoint).
#include "tests/torch_catch.h"

#include <sys/stat.h>

#include <filesystem>

#include "tests/cli/cli_support.h"

using namespace moxlab::testing;

TEST_CASE("A config path that is not a regular file fails train and config show in one line", "[e2e][errors]") {
  const std::string dir = scratch_dir("cli_config_path");
  std::filesystem::create_directories(dir + "/conf_dir");
  CHECK(one_line_error(run_cli("train --config conf_dir", dir), "config file conf_dir is a directory, not a TOML file"));
  CHECK(one_line_error(run_cli("config show --config conf_dir", dir), "config file conf_dir is a directory"));
  REQUIRE(::mkfifo((dir + "/conf_fifo").c_str(), 0600) == 0);
  CHECK(one_line_error(run_cli("config show --config conf_fifo", dir), "config file conf_fifo is a FIFO"));
  CHECK(one_line_error(run_cli("train --config ''", dir), "--config: must not be empty"));
  CHECK(one_line_error(run_cli("config show --config conf_dir/../x.toml --set train.steps=5", dir), "cannot open config file"));
}

TEST_CASE("Numbers and ids on the command line are validated with the flag named", "[e2e][errors]") {
  const std::string dir = scratch_dir("cli_numbers");
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"generate --checkpoint x.pt --temperature nan", "--temperature: must be a number in [0, 100], got 'nan'"},
      {"generate --checkpoint x.pt --temperature -1", "--temperature: must be a number in [0, 100], got '-1'"},
      {"generate --checkpoint x.pt --temperature inf", "--temperature: must be a number in [0, 100], got 'inf'"},
      {"generate --checkpoint x.pt --max-new-tokens 1e3", "--max-new-tokens: must be an integer in [0, 1048576], got '1e3'"},
      {"generate --checkpoint x.pt --seed -1", "--seed: must be an integer"},
      {"generate --run 0", "--run: must be a run id (a positive integer), got '0'"},
      {"generate --run 1 --checkpoint x.pt", "excludes --checkpoint"},
      {"eval --run -5", "--run: must be a run id (a positive integer), got '-5'"},
      {"eval --run 1 --limit -1", "--limit: must be an integer in [0, 2147483647], got '-1'"},
      {"eval --run 1 --threads 99999", "--threads: must be an integer in [0, 4096]"},
      {"eval --run 1 --temperature 0", "--temperature: must be a number in [0.001, 1000], got '0'"},
      {"eval --run 1 --temperature 1.5", "eval --temperature: applies to perplexity only; pass --tasks none"},
      {"eval --run 1 --temperature 1.5,0", "--temperature: must be a number in [0.001, 1000], got '0'"},
      {"eval --run 1 --tasks none --temperature 1.5,2,1.5", "eval --temperature: 1.5 is given twice"},
      {"probe --run abc --out a.h5", "--run: must be a run id (a positive integer), got 'abc'"},
      {"probe --run 1 --tokens 99999999999999999999 --out a.h5", "--tokens: must be an integer"},
      {"observe --run 1 --top-p nan", "--top-p: must be a number in [0, 100], got 'nan'"},
      {"observe --run 1 --eps -1", "--eps: must be a number"},
      {"route --run 1 --tokens-per-domain 0", "--tokens-per-domain: must be an integer"},
      {"sweep run 0", "id: must be an integer in [1, "},
      {"sweep run 1 --workers 0", "--workers: must be auto or an integer in [1, 256], got '0'"},
      {"sweep run 1 --workers many", "--workers: must be auto or an integer in [1, 256], got 'many'"},
      {"sweep run 1 --stale-after nan", "--stale-after: must be a number"},
      {"train --config x.toml --resume -4", "--resume: must be a run id (a positive integer), got '-4'"},
      {"convert tomoe --checkpoint x.pt --steps 0", "--steps: must be an integer in [1, 2147483647], got '0'"},
      {"prune wanda --checkpoint x.pt --calibration 1.5", "--calibration: must be an integer"},
      {"bench train --config x.toml --vocab -3", "--vocab: must be an integer"},
      {"bench infer --config x.toml --paired nan", "--paired: must be a number"},
  };
  for (const Case& c : cases) {
    const CliResult r = run_cli(c.args, dir);
    INFO(c.args << "\n" << r.err);
    CHECK(one_line_error(r, c.message));
  }
}

TEST_CASE("import hf without --tokenizer needs a directory that carries one", "[e2e][errors]") {
  const std::string dir = scratch_dir("cli_import_hf");
  std::filesystem::create_directories(dir + "/plain_hf");
  CHECK(one_line_error(run_cli("import hf --dir plain_hf", dir),
                       "import hf: plain_hf carries no tokenizer (moxlab export hf writes one): give --tokenizer KIND:PATH"));
}
