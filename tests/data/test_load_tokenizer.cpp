// load_tokenizer(): every spec kind, identities, and one-line errors for bad specs and paths.
#include <catch2/catch.hpp>

#include <thread>

#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/tokenizers/bpe_trainer.h"
#include "core/data/tokenizers/byte_level_bpe.h"
#include "core/data/tokenizers/tokenizer.h"
#include "tests/data/tokenizer_test_support.h"

using moxlab::load_tokenizer;
using moxlab::test::ScratchDir;

TEST_CASE("load_tokenizer: bpe spec round-trips a trained vocabulary", "[tokenizer][load]") {
  ScratchDir dir("load");
  const auto trained = moxlab::train_byte_level_bpe({"the cat sat on the mat with the hat"}, 300);
  trained.save(dir.file("v.json"));
  const auto tok = load_tokenizer("bpe:" + dir.file("v.json"));
  CHECK(tok->kind() == "bpe");
  CHECK(tok->vocab_size() == trained.vocab_size());
  CHECK(tok->identity() == trained.identity());
  CHECK(tok->identity() == moxlab::sha256_file(dir.file("v.json")));
  CHECK(tok->encode("the hat") == trained.encode("the hat"));
}

TEST_CASE("load_tokenizer: real gpt2, sentencepiece and llama2c files", "[tokenizer][load]") {
  const std::string gpt2_vocab = moxlab::test::shared_file("tokenizers/gpt2/vocab.bpe");
  const std::string model = moxlab::test::shared_file("tokenizers/llama2/tokenizer.model");
  const std::string bin = moxlab::test::shared_file("tokenizers/llama2/tokenizer.bin");
  if (!gpt2_vocab.empty()) {
    const auto t = load_tokenizer("gpt2:" + moxlab::shared_data_dir() + "/tokenizers/gpt2");
    CHECK(t->kind() == "gpt2");
    CHECK(t->vocab_size() == 50257);
    CHECK(t->document_separator() == 50256);
  }
  if (!model.empty()) {
    const auto t = load_tokenizer("sentencepiece:" + model);
    CHECK(t->kind() == "sentencepiece");
    CHECK(t->identity() == moxlab::sha256_file(model));
  }
  if (!bin.empty()) {
    const auto t = load_tokenizer("llama2c:" + bin);
    CHECK(t->kind() == "llama2c");
    CHECK(t->identity() == moxlab::sha256_file(bin));
    CHECK(t->document_separator() == 2);
  }
}

TEST_CASE("load_tokenizer: bad specs and missing files name the problem", "[tokenizer][load]") {
  ScratchDir dir("load-bad");
  CHECK_THROWS_WITH(load_tokenizer("wordpiece:/x"), Catch::Contains("unknown tokenizer kind \"wordpiece\""));
  CHECK_THROWS_WITH(load_tokenizer("no-colon"), Catch::Contains("KIND:PATH"));
  CHECK_THROWS_WITH(load_tokenizer("bpe:"), Catch::Contains("KIND:PATH"));
  for (const char* kind : {"bpe", "gpt2", "sentencepiece", "llama2c"}) {
    const std::string path = dir.file(std::string("missing-") + kind);
    INFO(kind);
    CHECK_THROWS_WITH(load_tokenizer(std::string(kind) + ":" + path), Catch::Contains(path));
  }
  moxlab::test::write_bytes(dir.file("garbage"), "garbage");
  for (const char* kind : {"bpe", "sentencepiece", "llama2c"}) {
    INFO(kind);
    try {
      load_tokenizer(std::string(kind) + ":" + dir.file("garbage"));
      FAIL("no exception");
    } catch (const moxlab::Error& e) {
      const std::string what = e.what();
      CHECK(what.find('\n') == std::string::npos);
      CHECK(what.find("garbage") != std::string::npos);
    }
  }
}

TEST_CASE("tokenizers encode concurrently from several threads with identical results", "[tokenizer][threads]") {
  std::vector<std::unique_ptr<moxlab::Tokenizer>> toks;
  toks.push_back(std::make_unique<moxlab::ByteLevelBpe>(
      moxlab::train_byte_level_bpe({moxlab::test::real_texts(50000).front().second}, 600)));
  const std::string dir = moxlab::shared_data_dir();
  if (!dir.empty()) {
    toks.push_back(load_tokenizer("gpt2:" + dir + "/tokenizers/gpt2"));
    toks.push_back(load_tokenizer("sentencepiece:" + dir + "/tokenizers/llama2/tokenizer.model"));
    toks.push_back(load_tokenizer("llama2c:" + dir + "/tokenizers/llama2/tokenizer.bin"));
  } else {
    WARN("shared data absent: only ByteLevelBpe is checked for thread safety");
  }
  std::vector<std::string> texts;
  for (const auto& [name, text] : moxlab::test::real_texts(30000)) texts.push_back(text);
  for (const auto& tok : toks) {
    std::vector<std::vector<std::int32_t>> expected;
    for (const auto& t : texts) expected.push_back(tok->encode(t));
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k)
      threads.emplace_back([&, k] {
        for (int rep = 0; rep < 3; ++rep)
          for (std::size_t i = 0; i < texts.size(); ++i) {
            const std::size_t j = (i + k) % texts.size();  // threads work on different texts at once
            if (tok->encode(texts[j]) != expected[j] || tok->decode(expected[j]) != texts[j]) ++mismatches[k];
          }
      });
    for (auto& th : threads) th.join();
    INFO(tok->kind());
    CHECK(mismatches == std::vector<int>(4, 0));
  }
}
