// ByteLevelBpe: exact round trips, the JSON file format (save/load/identity), malformed files.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/data/tokenizers/bpe_trainer.h"
#include "core/data/tokenizers/byte_level_bpe.h"
#include "tests/data/tokenizer_test_support.h"

using moxlab::ByteLevelBpe;
using moxlab::test::ScratchDir;

namespace {

// A small vocabulary trained on real text (Debian's Python sources are always present).
const ByteLevelBpe& trained_bpe() {
  static const ByteLevelBpe bpe = [] {
    moxlab::BpeTrainer t;
    for (const auto& [name, text] : moxlab::test::real_texts(100000)) t.add_text(text);
    return t.train(1024);
  }();
  return bpe;
}

}  // namespace

TEST_CASE("ByteLevelBpe: exact round trips on real and tricky text", "[tokenizer][bpe]") {
  const ByteLevelBpe& bpe = trained_bpe();
  REQUIRE(bpe.vocab_size() == 1024);
  CHECK(bpe.eos_id() == 1023);
  CHECK(bpe.bos_id() == -1);
  CHECK(bpe.document_separator() == 1023);
  CHECK(bpe.kind() == "bpe");
  std::vector<std::string> texts = moxlab::test::tricky_texts();
  texts.push_back(std::string("invalid \xff\xfe utf-8 \xc3 and nul \0 bytes", 34));
  texts.push_back("");
  for (const auto& [name, text] : moxlab::test::real_texts()) texts.push_back(text);
  for (const auto& t : texts) {
    const auto ids = bpe.encode(t);
    CHECK(bpe.decode(ids) == t);
    std::string joined;
    std::size_t out_of_range = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      out_of_range += ids[i] < 0 || ids[i] >= bpe.eos_id();  // encode never emits the special token
      joined += bpe.token_bytes(ids[i], i ? ids[i - 1] : -1);
    }
    CHECK(out_of_range == 0);
    CHECK(joined == t);
    if (t.size() > 10000) CHECK(ids.size() < t.size() / 2);  // the merges do compress real text
  }
  CHECK(bpe.decode({bpe.eos_id()}) == "<|endoftext|>");
  CHECK_THROWS_AS(bpe.decode({bpe.vocab_size()}), moxlab::Error);
  CHECK_THROWS_AS(bpe.token_bytes(-1, -1), moxlab::Error);
}

TEST_CASE("ByteLevelBpe: encoding is the same in one call or chunk by chunk", "[tokenizer][bpe]") {
  // Splitting text at a chunk boundary (before a space-led word) must not change the ids; this
  // checks that the per-call cache returns what a fresh merge would.
  const ByteLevelBpe& bpe = trained_bpe();
  const std::string a = "def f(x):\n    return x + 1\n", b = "def g(y):\n    return y * 2\n";
  auto ids = bpe.encode(a);
  const auto ids_b = bpe.encode(b);
  ids.insert(ids.end(), ids_b.begin(), ids_b.end());
  CHECK(bpe.encode(a + b) == ids);
}

TEST_CASE("ByteLevelBpe: save and load keep merges and identity", "[tokenizer][bpe]") {
  ScratchDir dir("bpe");
  const ByteLevelBpe& bpe = trained_bpe();
  const std::string path = dir.file("bpe.json");
  bpe.save(path);
  const auto j = nlohmann::json::parse(moxlab::test::read_prefix(path));
  CHECK(j["kind"] == "moxlab-bpe");
  CHECK(j["version"] == 1);
  CHECK(j["vocab_size"] == 1024);
  REQUIRE(j["merges"].size() == 1024 - 257);
  CHECK(j["merges"][0][0] == bpe.merges()[0].first);
  CHECK(j["merges"][0][1] == bpe.merges()[0].second);

  const ByteLevelBpe loaded = ByteLevelBpe::load(path);
  CHECK(loaded.merges() == bpe.merges());
  CHECK(loaded.identity() == bpe.identity());
  CHECK(loaded.identity().size() == 64);
  const std::string text = moxlab::test::real_texts(20000).front().second;
  CHECK(loaded.encode(text) == bpe.encode(text));

  // The identity is the hash of the file: the same merges written differently hash differently,
  // another vocabulary always does.
  moxlab::test::write_bytes(dir.file("pretty.json"), j.dump(2));
  const ByteLevelBpe pretty = ByteLevelBpe::load(dir.file("pretty.json"));
  CHECK(pretty.merges() == bpe.merges());
  CHECK(pretty.identity() != bpe.identity());
  CHECK(ByteLevelBpe({{97, 98}}).identity() != ByteLevelBpe({{98, 97}}).identity());
}

TEST_CASE("ByteLevelBpe: malformed files throw moxlab::Error", "[tokenizer][bpe]") {
  ScratchDir dir("bpe-bad");
  auto load_text = [&](const std::string& content) {
    const std::string path = dir.file("bad.json");
    moxlab::test::write_bytes(path, content);
    return ByteLevelBpe::load(path);
  };
  CHECK_THROWS_AS(ByteLevelBpe::load(dir.file("missing.json")), moxlab::Error);
  CHECK_THROWS_WITH(ByteLevelBpe::load(dir.file("missing.json")), Catch::Contains("missing.json"));
  const std::string good = R"({"kind":"moxlab-bpe","version":1,"vocab_size":259,"merges":[[97,98],[256,99]]})";
  CHECK(load_text(good).vocab_size() == 259);
  CHECK(load_text(good).encode("abc") == std::vector<std::int32_t>{257});
  // Truncated file (the atomic writer prevents this, but a copy can still be cut).
  CHECK_THROWS_WITH(load_text(good.substr(0, good.size() / 2)), Catch::Contains("not valid JSON"));
  CHECK_THROWS_AS(load_text(""), moxlab::Error);
  CHECK_THROWS_AS(load_text("[]"), moxlab::Error);
  CHECK_THROWS_WITH(load_text(R"({"kind":"other","version":1,"vocab_size":257,"merges":[]})"), Catch::Contains("kind"));
  CHECK_THROWS_WITH(load_text(R"({"kind":"moxlab-bpe","version":2,"vocab_size":257,"merges":[]})"),
                    Catch::Contains("version"));
  CHECK_THROWS_WITH(load_text(R"({"kind":"moxlab-bpe","version":1,"vocab_size":300,"merges":[[97,98]]})"),
                    Catch::Contains("vocab_size"));
  CHECK_THROWS_AS(load_text(R"({"kind":"moxlab-bpe","version":1,"vocab_size":258,"merges":[[97]]})"), moxlab::Error);
  CHECK_THROWS_AS(load_text(R"({"kind":"moxlab-bpe","version":1,"vocab_size":258,"merges":[["a","b"]]})"),
                  moxlab::Error);
  // A merge may only use ids that exist before it; pairs may not repeat; ids may not be negative.
  CHECK_THROWS_WITH(load_text(R"({"kind":"moxlab-bpe","version":1,"vocab_size":258,"merges":[[97,256]]})"),
                    Catch::Contains("refers to an id"));
  CHECK_THROWS_WITH(load_text(R"({"kind":"moxlab-bpe","version":1,"vocab_size":259,"merges":[[97,98],[97,98]]})"),
                    Catch::Contains("repeated"));
  CHECK_THROWS_AS(load_text(R"({"kind":"moxlab-bpe","version":1,"vocab_size":258,"merges":[[-1,98]]})"),
                  moxlab::Error);
  CHECK_THROWS_AS(load_text(R"({"kind":"moxlab-bpe","version":1,"vocab_size":258,"merges":[[4294967393,98]]})"),
                  moxlab::Error);
  // Every message is one line.
  try {
    load_text("{");
    FAIL("no exception");
  } catch (const moxlab::Error& e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

TEST_CASE("BpeMergeTable follows GPT-2's lowest-rank-first procedure", "[tokenizer][bpe]") {
  // Ranks: (a,a)->X first, (X,a)->Y second. "aaaa" -> X X ; "aaa" -> X a -> Y.
  moxlab::BpeMergeTable t;
  REQUIRE(t.add('a', 'a', 300));
  REQUIRE(t.add(300, 'a', 301));
  REQUIRE(!t.add('a', 'a', 302));
  std::vector<std::int32_t> w{'a', 'a', 'a', 'a'};
  t.apply(w);
  CHECK(w == std::vector<std::int32_t>{300, 300});
  w = {'a', 'a', 'a'};
  t.apply(w);
  CHECK(w == std::vector<std::int32_t>{301});
  // A long word (100k symbols) is handled without quadratic blow-up.
  w.assign(100000, 'a');
  t.apply(w);
  CHECK(w == std::vector<std::int32_t>(50000, 300));
}
