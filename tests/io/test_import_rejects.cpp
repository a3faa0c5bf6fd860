// The weight imports refuse what the reliability audit found them accepting or choking on: a header or
// config.json whose sizes would build an enormous model (refused at once, before anything is built),
// safetensors files with inserted or duplicated bytes (which shift every later tensor), and NaN/Inf
// weights (named in the error). Every import runs in a forked child with a time limit and an
// address-space cap (tests/io/isolated_import.h), so the old behaviour fails the test rather than the machine.
#include "tests/torch_catch.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/io/hf_checkpoint.h"
#include "core/io/llama2c_import.h"
#include "tests/io/isolated_import.h"
#include "tests/scratch_dir.h"
#include "tests/tiny_weight_files.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A clean Error whose message contains every needle, within `seconds`.
void expect_clean_error(const IsolatedResult& r, const std::vector<std::string>& needles) {
  INFO(outcome_name(r.outcome) << ": " << r.message);
  REQUIRE(r.outcome == Outcome::clean_error);
  CHECK(r.message.find('\n') == std::string::npos);
  for (const auto& n : needles) CHECK(r.message.find(n) != std::string::npos);
}

// An HF checkpoint folder of the tiny model with the given config.json and model.safetensors bytes.
std::string hf_dir(const ScratchDir& d, const std::string& name, const std::string& config, const std::string& st) {
  std::filesystem::create_directories(d.file(name));
  write_bytes(d.file(name + "/config.json"), config);
  write_bytes(d.file(name + "/model.safetensors"), st);
  return d.file(name);
}

}  // namespace

TEST_CASE("import llama2c refuses a header of 2^31-1 layers at once, before building the model", "[import][llama2c]") {
  ScratchDir d("l2c_huge");
  TinyFile f = tiny_llama2c();
  const std::int32_t layers = std::numeric_limits<std::int32_t>::max();
  std::memcpy(&f.bytes[8], &layers, 4);
  write_bytes(d.file("huge.bin"), f.bytes);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = isolated_import([&] { import_llama2c(d.file("huge.bin"), "llama2c:unused"); });
  expect_clean_error(r, {d.file("huge.bin"), "model.n_layers", "2147483647"});
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));

  // Every size in range, but more weights than the file holds: refused by the size check, not by a copy.
  TinyFile g = tiny_llama2c();
  const std::int32_t more = 512;
  std::memcpy(&g.bytes[8], &more, 4);
  write_bytes(d.file("more.bin"), g.bytes);
  expect_clean_error(isolated_import([&] { import_llama2c(d.file("more.bin"), "llama2c:unused"); }),
                     {d.file("more.bin"), "truncated"});
}

TEST_CASE("import hf refuses num_hidden_layers 5000000 at once, before building the model", "[import][hf]") {
  ScratchDir d("hf_huge");
  auto cfg = nlohmann::json::parse(tiny_hf_config());
  cfg["num_hidden_layers"] = 5000000;
  const std::string dir = hf_dir(d, "huge", cfg.dump(), tiny_hf_safetensors().bytes);
  const auto t0 = std::chrono::steady_clock::now();
  expect_clean_error(isolated_import([&] { import_hf(dir, "bpe:unused.json"); }),
                     {"num_hidden_layers", "5000000", "config.json"});
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));

  // In range (512 layers, 4M vocabulary) but without the tensors: refused before the model is built.
  cfg = nlohmann::json::parse(tiny_hf_config());
  cfg["num_hidden_layers"] = 512;
  cfg["vocab_size"] = 1 << 22;
  cfg["hidden_size"] = 4096;
  cfg["num_attention_heads"] = 32;
  cfg["num_key_value_heads"] = 32;
  const std::string big = hf_dir(d, "big", cfg.dump(), tiny_hf_safetensors().bytes);
  const auto t1 = std::chrono::steady_clock::now();
  expect_clean_error(isolated_import([&] { import_hf(big, "bpe:unused.json"); }), {"model.embed_tokens.weight"});
  CHECK(std::chrono::steady_clock::now() - t1 < std::chrono::seconds(3));
}

TEST_CASE("import hf refuses a safetensors file with inserted or duplicated bytes", "[import][hf]") {
  ScratchDir d("hf_shifted");
  const TinyFile f = tiny_hf_safetensors();
  const std::size_t at = f.offset.at("model.layers.0.mlp.down_proj.weight");
  std::string inserted = f.bytes;
  inserted.insert(at, "\x01\x02\x03\x04");
  std::string duplicated = f.bytes;
  duplicated.insert(at, f.bytes.substr(at, 12));
  std::string trailing = f.bytes + std::string(8, '\0');
  for (const auto& [name, bytes] : {std::pair<std::string, std::string>{"inserted", inserted},
                                    {"duplicated", duplicated}, {"trailing", trailing}}) {
    DYNAMIC_SECTION(name) {
      const std::string dir = hf_dir(d, name, tiny_hf_config(), bytes);
      expect_clean_error(isolated_import([&] { import_hf(dir, "bpe:unused.json"); }), {dir + "/model.safetensors"});
    }
  }
  // The unmodified file imports.
  const std::string ok = hf_dir(d, "ok", tiny_hf_config(), f.bytes);
  const auto r = isolated_import([&] { import_hf(ok, "bpe:unused.json"); });
  INFO(r.message);
  CHECK(r.outcome == Outcome::accepted);
}

TEST_CASE("imports refuse NaN and Inf weights, naming the tensor", "[import][llama2c][hf]") {
  ScratchDir d("nonfinite");
  const TinyShape s;
  SECTION("llama2c") {
    TinyFile f = tiny_llama2c(s);
    // Layer 1 of w1 starts hidden*dim floats into the stacked tensor.
    plant_float(f.bytes, f.offset.at("w1"), static_cast<std::size_t>(s.hidden * s.dim) + 5,
                std::numeric_limits<float>::quiet_NaN());
    plant_float(f.bytes, f.offset.at("w1"), static_cast<std::size_t>(s.hidden * s.dim) + 6,
                std::numeric_limits<float>::infinity());
    write_bytes(d.file("nan.bin"), f.bytes);
    expect_clean_error(isolated_import([&] { import_llama2c(d.file("nan.bin"), "llama2c:unused"); }),
                       {d.file("nan.bin"), "w1", "layer 1", "2 NaN/Inf"});
  }
  SECTION("safetensors") {
    TinyFile f = tiny_hf_safetensors(s);
    plant_float(f.bytes, f.offset.at("model.layers.0.mlp.up_proj.weight"), 3, -std::numeric_limits<float>::infinity());
    const std::string dir = hf_dir(d, "nan", tiny_hf_config(s), f.bytes);
    expect_clean_error(isolated_import([&] { import_hf(dir, "bpe:unused.json"); }),
                       {dir + "/model.safetensors", "model.layers.0.mlp.up_proj.weight", "1 NaN/Inf"});
  }
  SECTION("the unmodified tiny llama2c file imports") {
    write_bytes(d.file("ok.bin"), tiny_llama2c(s).bytes);
    const auto r = isolated_import([&] { import_llama2c(d.file("ok.bin"), "llama2c:unused"); });
    INFO(r.message);
    CHECK(r.outcome == Outcome::accepted);
  }
}
