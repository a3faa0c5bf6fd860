// Token shard tests: write/read round trip (uint16 and uint32), atomic publication, truncated and
// corrupt folders, digests, and the shard cache key.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/corpora/corpus_split.h"
#include "core/data/shards/shard_cache.h"
#include "core/data/shards/shard_writer.h"
#include "core/data/shards/token_shards.h"
#include "core/data/tokenizers/tokenizer.h"
#include "tests/scratch_dir.h"

namespace fs = std::filesystem;
using namespace moxlab;

namespace {

// Bytes -> ids (plus `offset`), eos after the 256 byte ids: the smallest tokenizer that keeps
// decode(encode(x)) == x, enough to check shards end to end.
class ByteTokenizer : public Tokenizer {
 public:
  explicit ByteTokenizer(std::int32_t offset = 0, std::int32_t vocab = 257) : offset_(offset), vocab_(vocab) {}
  std::vector<std::int32_t> encode(std::string_view text) const override {
    std::vector<std::int32_t> ids;
    for (unsigned char c : text) ids.push_back(offset_ + c);
    return ids;
  }
  std::string decode(const std::vector<std::int32_t>& ids) const override {
    std::string s;
    for (auto id : ids)
      if (id != eos_id()) s += static_cast<char>(id - offset_);
    return s;
  }
  std::string token_bytes(std::int32_t id, std::int32_t) const override {
    return id == eos_id() ? std::string() : std::string(1, static_cast<char>(id - offset_));
  }
  std::int32_t vocab_size() const override { return vocab_; }
  std::int32_t eos_id() const override { return offset_ + 256; }
  std::string kind() const override { return "test-bytes"; }
  std::string identity() const override { return "bytes+" + std::to_string(offset_); }

 private:
  std::int32_t offset_, vocab_;
};

using TempDir = moxlab::testing::ScratchDir;

std::vector<Document> small_corpus() {
  std::vector<Document> docs;
  for (int i = 0; i < 30; ++i) {
    docs.push_back({"prose", "p" + std::to_string(i), "Prose document " + std::to_string(i) + ". \xC3\xA9t\xC3\xA9\n"});
    docs.push_back({"code", "c" + std::to_string(i), "def f" + std::to_string(i) + "():\n    return " +
                                                         std::to_string(i * i) + "\n"});
  }
  return docs;
}

CorpusSplit small_split(std::uint64_t seed = 1) {
  SplitOptions o;
  o.seed = seed;
  o.val_fraction = 0.1;
  o.min_val_bytes = 0;
  return split_corpus(small_corpus(), o);
}

// Decodes a shard back into its documents (split at the separator).
std::vector<std::string> decode_docs(const TokenView& v, const Tokenizer& tok) {
  std::vector<std::string> docs(1);
  for (std::int64_t i = 0; i < v.size(); ++i) {
    if (v[i] == tok.document_separator()) {
      docs.emplace_back();
    } else {
      docs.back() += tok.decode({v[i]});
    }
  }
  docs.pop_back();  // after the final separator
  return docs;
}

}  // namespace

TEST_CASE("token shards round-trip every document (uint16)", "[shards]") {
  TempDir tmp;
  ByteTokenizer tok;
  auto split = small_split();
  const std::string dir = tmp.file("shards");
  const std::string digest = write_token_shards(split, tok, dir, ShardWriteOptions{2});
  auto shards = TokenShards::open(dir);
  CHECK(shards.digest() == digest);
  CHECK(shards.dtype() == "uint16");
  CHECK(shards.vocab_size() == 257);
  CHECK(shards.tokenizer_kind() == "test-bytes");
  CHECK(shards.separator() == 256);
  REQUIRE(shards.domains().size() == 2);
  CHECK(shards.domains()[0].name == "code");
  CHECK(shards.domains()[1].name == "prose");
  std::int64_t total_train = 0;
  for (const auto& d : split.domains) {
    const auto& info = shards.domains()[d.domain == "code" ? 0 : 1];
    CHECK(info.documents == static_cast<std::int64_t>(d.train.size() + d.val.size()));
    CHECK(info.train_bytes == d.train_bytes());
    CHECK(info.val_bytes == d.val_bytes());
    const auto& train = shards.tokens(d.domain, Split::Train);
    const auto& val = shards.tokens(d.domain, Split::Val);
    CHECK(train.size() == d.train_bytes() + static_cast<std::int64_t>(d.train.size()));  // + one separator each
    CHECK(fs::file_size(dir + "/" + d.domain + ".train.bin") == static_cast<std::uintmax_t>(train.size() * 2));
    total_train += train.size();
    auto train_docs = decode_docs(train, tok);
    REQUIRE(train_docs.size() == d.train.size());
    for (std::size_t i = 0; i < d.train.size(); ++i) CHECK(train_docs[i] == d.train[i].text);  // order kept
    auto val_docs = decode_docs(val, tok);
    REQUIRE(val_docs.size() == d.val.size());
    for (std::size_t i = 0; i < d.val.size(); ++i) CHECK(val_docs[i] == d.val[i].text);
    // windows equal element access; out-of-range windows are errors
    auto w = train.window(3, 10);
    for (int i = 0; i < 10; ++i) CHECK(w[i] == train[3 + i]);
    CHECK_THROWS_AS(train.window(train.size() - 5, 10), Error);
    CHECK_THROWS_AS(train.at(-1), Error);
  }
  CHECK(shards.total_tokens(Split::Train) == total_train);
  CHECK_THROWS_WITH(shards.tokens("nope", Split::Train), Catch::Contains("no domain 'nope'"));
  // little-endian on disk
  std::string raw = read_file(dir + "/code.train.bin");
  const auto& first = shards.tokens("code", Split::Train);
  CHECK(static_cast<unsigned char>(raw[0]) == (first[0] & 0xFF));
  CHECK(static_cast<unsigned char>(raw[1]) == (first[0] >> 8));
  shards.verify();
  // no temporary folders left behind
  for (const auto& e : fs::directory_iterator(tmp.path)) CHECK(e.path().filename() == "shards");
  // the folder is never overwritten in place
  CHECK_THROWS_WITH(write_token_shards(split, tok, dir), Catch::Contains("already exists"));
}

TEST_CASE("large vocabularies are stored as uint32", "[shards]") {
  TempDir tmp;
  ByteTokenizer tok(70000, 70257);  // ids 70000..70256
  auto split = small_split();
  write_token_shards(split, tok, tmp.file("s"));
  auto shards = TokenShards::open(tmp.file("s"));
  CHECK(shards.dtype() == "uint32");
  const auto& v = shards.tokens("prose", Split::Val);
  CHECK(v.width() == 4);
  CHECK(fs::file_size(tmp.file("s") + "/prose.val.bin") == static_cast<std::uintmax_t>(v.size() * 4));
  CHECK(decode_docs(v, tok).front() == split.find("prose")->val.front().text);
  for (std::int64_t i = 0; i < v.size(); ++i) CHECK(v[i] >= 70000);
}

TEST_CASE("out-of-vocabulary ids are rejected and leave nothing behind", "[shards]") {
  TempDir tmp;
  ByteTokenizer tok(0, 200);  // bytes >= 200 (the UTF-8 of e-acute) fall outside
  CHECK_THROWS_WITH(write_token_shards(small_split(), tok, tmp.file("s")), Catch::Contains("outside its vocabulary"));
  CHECK_FALSE(fs::exists(tmp.file("s")));
  CHECK(fs::is_empty(tmp.path));  // the temporary folder was removed
}

TEST_CASE("damaged shard folders are reported", "[shards]") {
  TempDir tmp;
  ByteTokenizer tok;
  const std::string dir = tmp.file("s");
  write_token_shards(small_split(), tok, dir);
  SECTION("truncated shard") {
    auto size = fs::file_size(dir + "/prose.train.bin");
    fs::resize_file(dir + "/prose.train.bin", size - 2);
    CHECK_THROWS_WITH(TokenShards::open(dir), Catch::Contains("truncated shard") && Catch::Contains("prose.train.bin"));
  }
  SECTION("missing shard") {
    fs::remove(dir + "/code.val.bin");
    CHECK_THROWS_WITH(TokenShards::open(dir), Catch::Contains("code.val.bin"));
  }
  SECTION("missing meta.json") {
    fs::remove(dir + "/meta.json");
    CHECK_THROWS_WITH(TokenShards::open(dir), Catch::Contains("meta.json"));
  }
  SECTION("corrupt meta.json") {
    std::ofstream(dir + "/meta.json") << "{\"format\": \"moxlab-token-shards\", \"version\": ";
    CHECK_THROWS_WITH(TokenShards::open(dir), Catch::Contains("corrupt") && Catch::Contains("meta.json"));
  }
  SECTION("edited meta.json no longer matches its digest") {
    auto meta = nlohmann::json::parse(read_file(dir + "/meta.json"));
    meta["seed"] = 999;
    write_text_atomically(dir + "/meta.json", meta.dump(2));
    CHECK_THROWS_WITH(TokenShards::open(dir), Catch::Contains("digest"));
  }
  SECTION("a flipped token is caught by verify()") {
    std::fstream f(dir + "/code.train.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);
    f.put('\x7f');
    f.close();
    auto shards = TokenShards::open(dir);  // sizes still match
    CHECK_THROWS_WITH(shards.verify(), Catch::Contains("code.train.bin"));
  }
}

TEST_CASE("the data digest follows the content", "[shards]") {
  TempDir tmp;
  ByteTokenizer tok;
  auto base = small_split();
  const auto d1 = write_token_shards(base, tok, tmp.file("a"));
  const auto d2 = write_token_shards(base, tok, tmp.file("b"));
  CHECK(d1 == d2);  // deterministic, including the threaded tokenization
  CHECK(read_file(tmp.file("a") + "/prose.train.bin") == read_file(tmp.file("b") + "/prose.train.bin"));
  auto changed = base;
  changed.domains[0].train[0].text += "!";
  CHECK(write_token_shards(changed, tok, tmp.file("c")) != d1);
  CHECK(write_token_shards(small_split(2), tok, tmp.file("d")) != d1);  // another seed
  CHECK(write_token_shards(base, ByteTokenizer(1, 258), tmp.file("e")) != d1);
  CHECK(write_token_shards(base, tok, tmp.file("f"), ShardWriteOptions{1}) == d1);  // thread count irrelevant
}

TEST_CASE("shard cache reuses, separates and repairs folders", "[shards][cache]") {
  TempDir tmp;
  TempDir data;
  std::ofstream(data.file("a.txt")) << "Some user text.\n\nAnother paragraph of it.\n";
  std::ofstream(data.file("b.jsonl")) << "{\"text\": \"one\"}\n{\"text\": \"two\"}\n{\"text\": \"three\"}\n";
  CorpusSpec spec;
  spec.use_package_corpus = false;
  spec.user = {{"notes", data.file("a.txt")}, {"web", data.file("b.jsonl")}};
  spec.split.min_val_bytes = 0;
  ByteTokenizer tok;
  const std::string root = tmp.file("cache");
  const std::string dir = build_or_open_shards(spec, tok, root);
  CHECK(fs::path(dir).parent_path() == fs::path(root));
  CHECK(fs::path(dir).filename().string().rfind("shards-", 0) == 0);
  auto shards = TokenShards::open(dir);
  CHECK(shards.has_domain("notes"));
  CHECK(shards.has_domain("web"));
  auto mtime = fs::last_write_time(dir + "/meta.json");
  CHECK(build_or_open_shards(spec, tok, root) == dir);  // cached
  CHECK(fs::last_write_time(dir + "/meta.json") == mtime);

  auto other_seed = spec;
  other_seed.split.seed = 4321;
  CHECK(build_or_open_shards(other_seed, tok, root) != dir);
  auto other_fraction = spec;
  other_fraction.split.val_fraction = 0.2;
  CHECK(build_or_open_shards(other_fraction, tok, root) != dir);
  CHECK(build_or_open_shards(spec, ByteTokenizer(1, 258), root) != dir);
  std::ofstream(data.file("b.jsonl"), std::ios::app) << "{\"text\": \"four\"}\n";  // content change
  const std::string changed = build_or_open_shards(spec, tok, root);
  CHECK(changed != dir);

  // a damaged cached folder is rebuilt, not used
  fs::resize_file(changed + "/web.train.bin", 1);
  CHECK(build_or_open_shards(spec, tok, root) == changed);
  CHECK_NOTHROW(TokenShards::open(changed).verify());
}
