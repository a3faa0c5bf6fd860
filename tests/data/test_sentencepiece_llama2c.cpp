// SentencePieceTok (LLaMA-2 tokenizer.model) and Llama2cTokenizer (llama2.c tokenizer.bin):
// round trips on real text, the cross-check that both files of the LLaMA-2 vocabulary encode real
// text identically, hand-checked merging on a synthetic tokenizer.bin, and malformed files.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <unordered_map>

#include "core/common/error.h"
#include "core/data/tokenizers/llama2c_tokenizer.h"
#include "core/data/tokenizers/sentencepiece_tokenizer.h"
#include "tests/data/tokenizer_test_support.h"

using moxlab::Llama2cTokenizer;
using moxlab::SentencePieceTok;
using moxlab::test::ScratchDir;
using Ids = std::vector<std::int32_t>;

namespace {

const SentencePieceTok* llama_sp() {
  static const std::unique_ptr<SentencePieceTok> tok = [] {
    const std::string path = moxlab::test::shared_file("tokenizers/llama2/tokenizer.model");
    return path.empty() ? nullptr : std::make_unique<SentencePieceTok>(path);
  }();
  return tok.get();
}

const Llama2cTokenizer* llama_bin() {
  static const std::unique_ptr<Llama2cTokenizer> tok = [] {
    const std::string path = moxlab::test::shared_file("tokenizers/llama2/tokenizer.bin");
    return path.empty() ? nullptr : std::make_unique<Llama2cTokenizer>(path);
  }();
  return tok.get();
}

// Texts for the SentencePiece round trips: SentencePiece itself cannot round-trip U+2581 ("▁",
// its space symbol), which the real texts here do not contain.
std::vector<std::string> round_trip_texts() {
  std::vector<std::string> texts = moxlab::test::tricky_texts();
  texts.push_back("");
  for (const auto& [name, text] : moxlab::test::real_texts(100000)) texts.push_back(text);
  return texts;
}

void check_round_trip(const moxlab::Tokenizer& tok, const std::string& text) {
  const Ids ids = tok.encode(text);
  CHECK(tok.decode(ids) == text);
  std::string joined;
  for (std::size_t i = 0; i < ids.size(); ++i) joined += tok.token_bytes(ids[i], i ? ids[i - 1] : -1);
  CHECK(joined == text);
}

// Serialises a llama2.c tokenizer.bin: <unk>, BOS, EOS, the 256 byte pieces, then `extra`.
std::string make_tokenizer_bin(const std::vector<std::pair<std::string, float>>& extra) {
  std::vector<std::pair<std::string, float>> all{{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    all.emplace_back(buf, 0.0f);
  }
  all.insert(all.end(), extra.begin(), extra.end());
  std::int32_t max_len = 0;
  for (const auto& [s, score] : all) max_len = std::max<std::int32_t>(max_len, static_cast<std::int32_t>(s.size()));
  std::string out(reinterpret_cast<const char*>(&max_len), 4);
  for (const auto& [s, score] : all) {
    const auto len = static_cast<std::int32_t>(s.size());
    out.append(reinterpret_cast<const char*>(&score), 4);
    out.append(reinterpret_cast<const char*>(&len), 4);
    out += s;
  }
  return out;
}

// run.c's encode written the direct way (quadratic): dummy prefix, code points with byte fallback,
// then merge the best-scoring adjacent pair (first one on ties) until none is in the vocabulary.
Ids naive_run_c_encode(const Llama2cTokenizer& tok, const std::string& text) {
  std::unordered_map<std::string, std::int32_t> lookup;
  for (std::int32_t id = tok.vocab_size() - 1; id >= 0; --id) lookup[tok.piece(id)] = id;
  Ids ids;
  if (text.empty()) return ids;
  ids.push_back(lookup.at(" "));
  std::string cp;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((text[i] & 0xC0) != 0x80) cp.clear();
    cp += text[i];
    if (i + 1 < text.size() && (text[i + 1] & 0xC0) == 0x80 && cp.size() < 4) continue;
    if (lookup.count(cp)) {
      ids.push_back(lookup[cp]);
    } else {
      for (unsigned char b : cp) ids.push_back(b + 3);
    }
    cp.clear();
  }
  for (;;) {
    float best = -1e10f;
    int best_i = -1, best_id = -1;
    for (std::size_t i = 0; i + 1 < ids.size(); ++i) {
      auto it = lookup.find(tok.piece(ids[i]) + tok.piece(ids[i + 1]));
      if (it != lookup.end() && tok.score(it->second) > best) {
        best = tok.score(it->second);
        best_i = static_cast<int>(i);
        best_id = it->second;
      }
    }
    if (best_i < 0) break;
    ids[best_i] = best_id;
    ids.erase(ids.begin() + best_i + 1);
  }
  return ids;
}

// Short pieces of real text (the naive encoder is quadratic).
std::vector<std::string> short_texts() {
  std::vector<std::string> out = moxlab::test::tricky_texts();
  for (const auto& [name, text] : moxlab::test::real_texts(20000))
    for (std::size_t i = 0; i + 1 < text.size() && out.size() < 400; i += 2000) {
      std::string piece = text.substr(i, 150);
      while (!piece.empty() && (piece.back() & 0xC0) == 0x80) piece.pop_back();  // whole characters only
      if (!piece.empty() && (piece.back() & 0x80)) piece.pop_back();
      out.push_back(piece);
    }
  return out;
}

}  // namespace

TEST_CASE("Llama2cTokenizer encodes exactly like a direct transcription of run.c", "[tokenizer][llama2c]") {
  std::vector<std::string> paths;
  for (const char* rel : {"tokenizers/llama2/tokenizer.bin", "models/stories260K/tok512.bin"})
    if (std::string p = moxlab::test::shared_file(rel); !p.empty()) paths.push_back(p);
  for (const auto& path : paths) {
    const Llama2cTokenizer tok(path);
    for (const auto& t : short_texts()) {
      INFO(path << " text: " << t);
      CHECK(tok.encode(t) == naive_run_c_encode(tok, t));
    }
  }
}

TEST_CASE("SentencePieceTok: LLaMA-2 model, known ids and exact round trips", "[tokenizer][sentencepiece]") {
  const SentencePieceTok* tok = llama_sp();
  if (!tok) return;
  CHECK(tok->vocab_size() == 32000);
  CHECK(tok->bos_id() == 1);
  CHECK(tok->eos_id() == 2);
  CHECK(tok->document_separator() == 2);
  CHECK(tok->kind() == "sentencepiece");
  CHECK(tok->encode("Hello world") == Ids{15043, 3186});
  CHECK(tok->encode("").empty());
  for (const auto& t : round_trip_texts()) check_round_trip(*tok, t);
  // After BOS the dummy-prefix space is dropped, as SentencePiece does.
  CHECK(tok->token_bytes(15043, 1) == "Hello");
  CHECK(tok->token_bytes(15043, 3186) == " Hello");
  CHECK(tok->token_bytes(1, -1).empty());
  CHECK(tok->token_bytes(13, 15043) == "\n");  // <0x0A>
  CHECK_THROWS_AS(tok->token_bytes(32000, -1), moxlab::Error);
}

TEST_CASE("Llama2cTokenizer: LLaMA-2 tokenizer.bin encodes real text exactly like tokenizer.model",
          "[tokenizer][llama2c][sentencepiece]") {
  const Llama2cTokenizer* bin = llama_bin();
  const SentencePieceTok* sp = llama_sp();
  if (!bin || !sp) return;
  CHECK(bin->vocab_size() == 32000);
  CHECK(bin->bos_id() == 1);
  CHECK(bin->eos_id() == 2);
  CHECK(bin->kind() == "llama2c");
  CHECK(bin->identity() != sp->identity());
  CHECK(bin->encode("Hello world") == Ids{15043, 3186});
  std::size_t compared = 0;
  for (const auto& t : round_trip_texts()) {
    INFO("text: " << t.substr(0, 80));
    const Ids a = bin->encode(t);
    CHECK(a == sp->encode(t));
    CHECK(bin->decode(a) == sp->decode(a));
    check_round_trip(*bin, t);
    compared += a.size();
  }
  CHECK(compared > 1000);
}

TEST_CASE("Llama2cTokenizer: stories260K tok512.bin round trips", "[tokenizer][llama2c]") {
  const std::string path = moxlab::test::shared_file("models/stories260K/tok512.bin");
  if (path.empty()) return;
  const Llama2cTokenizer tok(path);
  CHECK(tok.vocab_size() == 512);
  CHECK(tok.max_token_length() == 7);
  CHECK(tok.piece(3) == "<0x00>");
  const std::string story = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  const Ids ids = tok.encode(story);
  CHECK(ids.size() < story.size() / 2);
  for (const auto& t : round_trip_texts()) check_round_trip(tok, t);
}

TEST_CASE("Llama2cTokenizer: hand-checked encoding on a synthetic tokenizer.bin", "[tokenizer][llama2c]") {
  ScratchDir dir("llama2c");
  // ids: 259 " ", 260 "a", 261 "b", 262 "ab", 263 " a", 264 "ba", 265 " ab", 266 "é", 267 "aa"
  const std::string path = dir.file("tok.bin");
  moxlab::test::write_bytes(path, make_tokenizer_bin({{" ", -100},
                                                      {"a", -100},
                                                      {"b", -100},
                                                      {"ab", -1},
                                                      {" a", -5},
                                                      {"ba", -2},
                                                      {" ab", -3},
                                                      {"é", -100},
                                                      {"aa", -20000000000.0f}}));
  const Llama2cTokenizer tok(path);
  REQUIRE(tok.vocab_size() == 268);
  // "ab": [" ", a, b] -> best is "ab" (-1) -> [" ", ab] -> " ab" (-3).
  CHECK(tok.encode("ab") == Ids{265});
  // "bab": [" ", b, a, b]: candidates " b" none, "ba" -2, "ab" -1 -> [" ", b, ab]; nothing else merges.
  CHECK(tok.encode("bab") == Ids{259, 261, 262});
  // "aba": [" ", a, b, a]: " a" -5, "ab" -1, "ba" -2 -> [" ", ab, a]; " ab" -3 -> [" ab", a].
  CHECK(tok.encode("aba") == Ids{265, 260});
  // Ties go to the leftmost pair: "abab" -> [" ", ab, ab] -> [" ab", ab].
  CHECK(tok.encode("abab") == Ids{265, 262});
  // A pair scoring below run.c's -1e10 floor never merges.
  CHECK(tok.encode("aa") == Ids{263, 260});
  // Code points in the vocabulary are one token; others fall back to their bytes + 3.
  CHECK(tok.encode("é") == Ids{259, 266});
  CHECK(tok.encode("ü") == Ids{259, 0xC3 + 3, 0xBC + 3});
  CHECK(tok.encode("\n") == Ids{259, 13});
  CHECK(tok.encode("").empty());
  // decode drops the dummy prefix; token_bytes follows run.c after BOS.
  CHECK(tok.decode({265, 260}) == "aba");
  CHECK(tok.decode({259, 0xC3 + 3, 0xBC + 3}) == "ü");
  CHECK(tok.token_bytes(265, 1) == "ab");
  CHECK(tok.token_bytes(265, 260) == " ab");
  CHECK(tok.token_bytes(0x41 + 3, 1) == "A");
  CHECK(tok.decode({1, 265, 2}) == "ab");
  // A vocabulary with a piece that continues past a space ("a ") must be merged across words.
  moxlab::test::write_bytes(dir.file("space.bin"),
                            make_tokenizer_bin({{" ", -100}, {"a", -100}, {"b", -100}, {"a ", -1}}));
  const Llama2cTokenizer spaced(dir.file("space.bin"));
  CHECK(spaced.encode("a b") == Ids{259, 262, 261});
  CHECK(spaced.decode({259, 262, 261}) == "a b");
  // Literal markup text never turns into a byte or control token.
  for (const std::string t : {"<0x41>", "<unk>", "\n<s>\n", "a\xff" "b\x80\x80\x80\x80\x80 \xc3"}) {
    const Ids ids = tok.encode(t);
    CHECK(tok.decode(ids) == t);
  }
}

TEST_CASE("Llama2cTokenizer and SentencePieceTok: missing, truncated and corrupt files", "[tokenizer][llama2c]") {
  ScratchDir dir("llama2c-bad");
  CHECK_THROWS_WITH(Llama2cTokenizer(dir.file("nope.bin")), Catch::Contains("nope.bin"));
  CHECK_THROWS_WITH(SentencePieceTok(dir.file("nope.model")), Catch::Contains("nope.model"));
  const std::string good = make_tokenizer_bin({{" ", -1}, {"a", -2}});
  const std::string path = dir.file("t.bin");
  moxlab::test::write_bytes(path, good);
  CHECK(Llama2cTokenizer(path).vocab_size() == 261);
  // Cut inside the last token, inside a length field, and right after the header.
  for (std::size_t cut : {good.size() - 1, good.size() - 6, std::size_t{4}, std::size_t{2}, std::size_t{0}}) {
    INFO("cut at " << cut);
    moxlab::test::write_bytes(path, good.substr(0, cut));
    CHECK_THROWS_AS(Llama2cTokenizer(path), moxlab::Error);
  }
  // A token longer than max_token_length, and a broken byte piece.
  std::string bad = good;
  const std::int32_t huge = 1000;
  std::memcpy(&bad[4 + 4], &huge, 4);
  moxlab::test::write_bytes(path, bad);
  CHECK_THROWS_WITH(Llama2cTokenizer(path), Catch::Contains("length"));
  bad = good;
  bad.replace(bad.find("<0x41>"), 6, "<0x4X>");
  moxlab::test::write_bytes(path, bad);
  CHECK_THROWS_WITH(Llama2cTokenizer(path), Catch::Contains("byte piece"));
  // Not a SentencePiece model.
  moxlab::test::write_bytes(dir.file("bad.model"), "this is not a protobuf");
  CHECK_THROWS_AS(SentencePieceTok(dir.file("bad.model")), moxlab::Error);
  if (const std::string real = moxlab::test::shared_file("tokenizers/llama2/tokenizer.model"); !real.empty()) {
    const std::string bytes = moxlab::test::read_prefix(real);
    moxlab::test::write_bytes(dir.file("cut.model"), bytes.substr(0, bytes.size() / 2));
    CHECK_THROWS_AS(SentencePieceTok(dir.file("cut.model")), moxlab::Error);
  }
}
