// Config inputs that used to give a silent wrong result or a confusing message: a config path that is
// a directory or a FIFO, names users reach for that are not keys (train.steps), a warm-up longer than
// the run, integers beyond the range of their field, and the article of a type name.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "core/common/error.h"
#include "core/config/config.h"

using namespace moxlab;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("moxlab_config_inputs_" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir.parent_path());
  return dir.string();
}
}  // namespace

TEST_CASE("A config path that is not a regular file is an error rather than the defaults", "[config]") {
  const std::string dir = scratch("a_dir");
  std::filesystem::create_directories(dir);
  CHECK(error_of([&] { load_config(dir); }) == "config file " + dir + " is a directory, not a TOML file");
  const std::string fifo = scratch("a_fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of([&] { load_config(fifo); }) == "config file " + fifo + " is a FIFO, not a TOML file");  // would block
  CHECK(error_of([] { load_config("/dev/null"); }) == "config file /dev/null is a device, not a TOML file");
  CHECK(error_of([&] { load_config(dir + "/missing.toml"); }) == "cannot open config file " + dir + "/missing.toml");
}

TEST_CASE("An unknown key that users mean as another suggests the real key", "[config]") {
  CHECK(error_of([] { load_config("", {"train.steps=5"}); }).find("did you mean 'train.max_steps'?") != std::string::npos);
  CHECK(error_of([] { load_config("", {"train.learning_rate=1e-3"}); }).find("did you mean 'train.lr'?") != std::string::npos);
  CHECK(error_of([] { load_config("", {"model.layers=2"}); }).find("did you mean 'model.n_layers'?") != std::string::npos);
  // Misspellings still find their key by edit distance.
  CHECK(error_of([] { load_config("", {"train.max_stepz=5"}); }).find("did you mean 'train.max_steps'?") != std::string::npos);
  // An alias is a hint only, never accepted.
  CHECK(error_of([] { load_config("", {"train.steps=5"}); }).find("unknown config key 'train.steps'") == 0);
}

TEST_CASE("A run shorter than its warm-up says how to fix it", "[config]") {
  CHECK(error_of([] { load_config("", {"train.max_steps=5"}); }) ==
        "train.warmup_steps (50) exceeds train.max_steps (5): set train.warmup_steps too, e.g. --set train.warmup_steps=0");
  CHECK(load_config("", {"train.max_steps=5", "train.warmup_steps=0"}).train.max_steps == 5);
}

TEST_CASE("Integers beyond their field's range are errors showing the text given", "[config]") {
  CHECK(error_of([] { load_config("", {"train.max_steps=99999999999999999999"}); })
            .find("'train.max_steps' = 99999999999999999999 is out of range") != std::string::npos);
  // Inside the schema's wide range but beyond int: it used to wrap to a negative step count.
  CHECK(error_of([] { load_config("", {"train.max_steps=3000000000"}); })
            .find("'train.max_steps' = 3000000000 is out of range [1, 2147483647]") != std::string::npos);
  CHECK(error_of([] { load_config("", {"model.dim=abc"}); }).find("expects an integer, got 'abc'") != std::string::npos);
  CHECK(error_of([] { load_config("", {"train.lr=fast"}); }).find("expects a number, got 'fast'") != std::string::npos);
}
