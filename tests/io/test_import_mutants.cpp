// Mutation tests of the weight loaders through the real import paths (import_llama2c, import_hf), each
// mutant in a forked child with a time limit (tests/io/isolated_import.h): byte flips, planted
// integers, truncations, inserted, deleted and duplicated chunks of real files (tests/mutation/mutants.h)
// must end accepted or in a clean moxlab::Error, never in a crash, a hang or an unclear error. The
// seeds are fixed, so a failure reproduces anywhere; the tally is printed so its counts show in the log.
#include "tests/torch_catch.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/io/hf_checkpoint.h"
#include "core/io/llama2c_import.h"
#include "tests/io/isolated_import.h"
#include "tests/mutation/mutants.h"
#include "tests/scratch_dir.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

constexpr double kMutantTimeout = 10.0;  // a clean import of stories260K takes well under a second

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string stories_dir() { return std::string(MOXLAB_SHARED_DATA) + "/models/stories260K"; }

bool have_stories() { return std::filesystem::exists(stories_dir() + "/stories260K.bin"); }

// Each format fixes its file size by its header (llama2.c: the sizes; safetensors: the offsets), so a
// mutant of another size that imports was read shifted: a silent wrong result.
struct ResizedAccepted {
  int count = 0;
  std::string first;
  void add(const IsolatedResult& r, const Mutant& m, const std::string& original) {
    if (r.outcome == Outcome::accepted && m.bytes.size() != original.size() && count++ == 0) first = m.how;
  }
};

void report(const OutcomeTally& t, const std::string& what, const ResizedAccepted& resized = {}) {
  WARN(t.summary(what) + ", " + std::to_string(resized.count) + " accepted with another size" +
       (resized.count ? " (first: " + resized.first + ")" : ""));
  CHECK(t.crash == 0);
  CHECK(t.hang == 0);
  CHECK(t.unclear_error == 0);
  CHECK(resized.count == 0);
}

// An HF export (model.safetensors + config.json) made in a child, so this process stays free of LibTorch
// threads: of stories260K when ../shared/data is present, else of a random model of its shape.
void export_reference(const std::string& dir) {
  const auto made = isolated_import(
      [&] {
        if (have_stories()) {
          export_hf(*import_llama2c(stories_dir() + "/stories260K.bin", "llama2c:unused").model, dir, "llama");
          return;
        }
        ModelOptions o;
        o.vocab_size = 512;
        o.dim = 64;
        o.ffn_hidden = 172;
        o.n_layers = 5;
        o.n_heads = 8;
        o.n_kv_heads = 4;
        o.max_seq_len = 512;
        Transformer m(o);
        m.init_weights(29);
        export_hf(m, dir, "llama");
      },
      120.0);
  INFO(made.message);
  REQUIRE(made.outcome == Outcome::accepted);
}

}  // namespace

TEST_CASE("import llama2c: 320 mutants of stories260K.bin end accepted or in a clean error", "[import][mutation]") {
  if (!have_stories()) {
    WARN("skipping: ../shared/data not found (models/stories260K/stories260K.bin)");
    return;
  }
  const std::string original = read_file(stories_dir() + "/stories260K.bin");
  ScratchDir dir("l2c_mutants");
  const std::string path = dir.file("mutant.bin");
  OutcomeTally tally;
  ResizedAccepted resized;
  for (const Mutant& m : make_mutants(original, 320, /*seed=*/2901, /*head=*/28)) {
    write_bytes(path, m.bytes);
    const IsolatedResult r = isolated_import([&] { import_llama2c(path, "llama2c:unused"); }, kMutantTimeout);
    tally.add(r, m.how);
    resized.add(r, m, original);
  }
  report(tally, "llama2c .bin -> import_llama2c", resized);
}

TEST_CASE("import hf: 320 mutants of an exported model.safetensors end accepted or in a clean error", "[import][mutation]") {
  ScratchDir dir("hf_st_mutants");
  export_reference(dir.file("ref"));
  const std::string original = read_file(dir.file("ref/model.safetensors"));
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, original.data(), 8);
  std::filesystem::create_directories(dir.file("m"));
  std::filesystem::copy_file(dir.file("ref/config.json"), dir.file("m/config.json"));
  OutcomeTally tally;
  ResizedAccepted resized;
  for (const Mutant& m : make_mutants(original, 320, /*seed=*/2902, /*head=*/8 + header_len)) {
    write_bytes(dir.file("m/model.safetensors"), m.bytes);
    const IsolatedResult r = isolated_import([&] { import_hf(dir.file("m"), "bpe:unused.json"); }, kMutantTimeout);
    tally.add(r, m.how);
    resized.add(r, m, original);
  }
  report(tally, "model.safetensors -> import_hf", resized);
}

TEST_CASE("import hf: mutants of its config.json end accepted or in a clean error", "[import][mutation]") {
  ScratchDir dir("hf_cfg_mutants");
  export_reference(dir.file("ref"));
  const std::string original = read_file(dir.file("ref/config.json"));
  std::filesystem::create_directories(dir.file("m"));
  std::filesystem::copy_file(dir.file("ref/model.safetensors"), dir.file("m/model.safetensors"));
  std::vector<Mutant> mutants = make_mutants(original, 48, /*seed=*/2903, /*head=*/original.size());
  // Format-aware: every size field set to values a corrupted or hostile file could hold.
  const auto cfg = nlohmann::json::parse(original);
  for (const char* key : {"hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads",
                          "num_hidden_layers", "vocab_size", "max_position_embeddings", "rms_norm_eps", "rope_theta"})
    for (const char* value : {"0", "-1", "3", "2147483647", "4294967360", "5000000", "9223372036854775807", "1e300",
                              "null", "\"64\""}) {
      auto j = cfg;
      j[key] = nlohmann::json::parse(value);
      mutants.push_back({j.dump(2), std::string(key) + " = " + value});
    }
  OutcomeTally tally;
  for (const Mutant& m : mutants) {
    write_bytes(dir.file("m/config.json"), m.bytes);
    tally.add(isolated_import([&] { import_hf(dir.file("m"), "bpe:unused.json"); }, kMutantTimeout), m.how);
  }
  report(tally, "config.json -> import_hf");
}
