// The torch-free check of llama2.c model files (core/formats/llama2c_format.h): header fields in their
// config keys' ranges, the file size exactly what the header implies, every weight finite; and the
// tensor offsets the importer copies from.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <limits>

#include "core/common/error.h"
#include "core/formats/llama2c_format.h"
#include "tests/tiny_weight_files.h"

using namespace moxlab;
using namespace moxlab::testing;

namespace {

std::string error_of(const std::string& bytes) {
  try {
    parse_llama2c(bytes, "m.bin");
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

void set_field(std::string& bytes, int field, std::int32_t value) { std::memcpy(&bytes[4 * field], &value, 4); }

}  // namespace

TEST_CASE("llama2c format: a valid file gives the model options and the tensor offsets", "[llama2c][formats]") {
  const TinyShape s;
  for (const bool shared : {true, false}) {
    const TinyFile f = tiny_llama2c(s, shared);
    const Llama2cModel m = parse_llama2c(f.bytes, "m.bin");
    CHECK(m.config.model.dim == s.dim);
    CHECK(m.config.model.ffn_hidden == s.hidden);
    CHECK(m.config.model.n_layers == s.layers);
    CHECK(m.config.model.n_heads == s.heads);
    CHECK(m.config.model.n_kv_heads == s.kv_heads);
    CHECK(m.config.model.vocab_size == s.vocab);
    CHECK(m.config.model.max_seq_len == s.seq);
    CHECK(m.config.model.tie_embeddings == shared);
    CHECK(m.config.run.kind == "import");
    for (const char* name : {"token_embedding_table", "wq", "wk", "w2", "rms_final_weight"}) {
      INFO(name);
      CHECK(m.tensor(name).offset == f.offset.at(name));
    }
    CHECK(m.tensor("wk").shape == std::vector<std::int64_t>{s.layers, s.kv_heads * s.head_dim(), s.dim});
    CHECK(m.tensor("wk").per_layer);
    CHECK_FALSE(m.tensor("token_embedding_table").per_layer);
    CHECK(shared == (f.offset.count("wcls") == 0));
    if (!shared) CHECK(m.tensor("wcls").offset == f.offset.at("wcls"));
  }
}

TEST_CASE("llama2c format: a header of 2^31-1 layers is refused at once, by its config range", "[llama2c][formats]") {
  std::string bytes = tiny_llama2c().bytes;
  set_field(bytes, 2, std::numeric_limits<std::int32_t>::max());
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = error_of(bytes);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100));
  INFO(e);
  CHECK(e.find("m.bin") != std::string::npos);
  CHECK(e.find("model.n_layers") != std::string::npos);
  CHECK(e.find("2147483647") != std::string::npos);
  CHECK(e.find("[1, 512]") != std::string::npos);
}

TEST_CASE("llama2c format: every header field out of range, and inconsistent heads, are refused", "[llama2c][formats]") {
  const std::string good = tiny_llama2c().bytes;
  struct Case {
    int field;
    std::int32_t value;
    const char* needle;
  };
  for (const Case c : {Case{0, 4, "model.dim"}, Case{0, -8, "model.dim"}, Case{1, 0, "hidden_dim is 0"},
                       Case{1, -16, "model.ffn_hidden"}, Case{2, 0, "model.n_layers"}, Case{3, 0, "model.n_heads"},
                       Case{3, 3, "divisible by model.n_heads"}, Case{4, 3, "multiple of model.n_kv_heads"},
                       Case{4, 1 << 20, "model.n_kv_heads"}, Case{5, 0, "vocab_size is 0"},
                       Case{5, std::numeric_limits<std::int32_t>::min(), "model.vocab_size"}, Case{6, 1, "model.max_seq_len"},
                       Case{6, 1 << 30, "model.max_seq_len"}}) {
    std::string bytes = good;
    set_field(bytes, c.field, c.value);
    const std::string e = error_of(bytes);
    INFO("field " << c.field << " = " << c.value << ": " << e);
    CHECK(e.find("has an invalid header") != std::string::npos);
    CHECK(e.find(c.needle) != std::string::npos);
  }
}

TEST_CASE("llama2c format: the file size must be exactly what the header implies", "[llama2c][formats]") {
  const std::string good = tiny_llama2c().bytes;
  CHECK(error_of(good.substr(0, 27)).find("too short for its header") != std::string::npos);
  CHECK(error_of(good.substr(0, good.size() - 4)).find("is truncated") != std::string::npos);
  CHECK(error_of(good + "abcd").find("does not match its header") != std::string::npos);
  // More layers than the file holds, all in range: refused by size before anything is read.
  std::string more = good;
  set_field(more, 2, 512);
  const std::string e = error_of(more);
  INFO(e);
  CHECK(e.find("is truncated") != std::string::npos);
  CHECK(e.find("n_layers 512") != std::string::npos);
  // An unshared classifier needs [V, d] more floats: the tied file with a negative vocab is short.
  std::string unshared = good;
  set_field(unshared, 5, -TinyShape{}.vocab);
  CHECK(error_of(unshared).find("is truncated") != std::string::npos);
}

TEST_CASE("llama2c format: NaN and Inf weights are refused, naming the tensor and layer", "[llama2c][formats]") {
  const TinyShape s;
  TinyFile f = tiny_llama2c(s);
  plant_float(f.bytes, f.offset.at("wv"), static_cast<std::size_t>(s.kv_heads * s.head_dim() * s.dim) + 2,
              std::numeric_limits<float>::quiet_NaN());
  std::string e = error_of(f.bytes);
  INFO(e);
  CHECK(e.find("m.bin: tensor wv of layer 1 holds 1 NaN/Inf value (first at element 2 of 32)") != std::string::npos);

  f = tiny_llama2c(s);
  plant_float(f.bytes, f.offset.at("token_embedding_table"), 7, std::numeric_limits<float>::infinity());
  plant_float(f.bytes, f.offset.at("token_embedding_table"), 9, -std::numeric_limits<float>::infinity());
  e = error_of(f.bytes);
  CHECK(e.find("tensor token_embedding_table holds 2 NaN/Inf values") != std::string::npos);

  // The legacy RoPE tables are not used, so what they hold does not matter.
  f = tiny_llama2c(s);
  plant_float(f.bytes, f.offset.at("freq_cis_real"), 0, std::numeric_limits<float>::quiet_NaN());
  CHECK(error_of(f.bytes) == "(accepted)");
}
