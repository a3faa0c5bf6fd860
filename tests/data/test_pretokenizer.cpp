// GPT-2 pre-tokenizer: exact chunking of hand-checked strings and lossless splitting of any bytes.
#include <catch2/catch.hpp>

#include "core/data/tokenizers/pretokenizer.h"
#include "tests/data/tokenizer_test_support.h"

using moxlab::gpt2_pretokenizer;

namespace {
std::vector<std::string> chunks(std::string_view text) {
  std::vector<std::string> out;
  for (auto c : gpt2_pretokenizer().split(text)) out.emplace_back(c);
  return out;
}
}  // namespace

TEST_CASE("pretokenizer splits like GPT-2's regex", "[tokenizer][pretokenizer]") {
  using V = std::vector<std::string>;
  CHECK(chunks("Hello world") == V{"Hello", " world"});
  // Contractions are split off (lower case only), letters/digits/punctuation runs keep one leading space.
  CHECK(chunks("I'm John's, isn't it?") == V{"I", "'m", " John", "'s", ",", " isn", "'t", " it", "?"});
  CHECK(chunks("WE'VE") == V{"WE", "'", "VE"});
  CHECK(chunks("abc123 456") == V{"abc", "123", " 456"});
  // A run of spaces leaves its last space to the next word (\s+(?!\S)).
  CHECK(chunks("a   b") == V{"a", "  ", " b"});
  CHECK(chunks("a\n\n b") == V{"a", "\n\n", " b"});
  CHECK(chunks("end  ") == V{"end", "  "});
  CHECK(chunks("x !!?") == V{"x", " !!?"});
  // Unicode letters and numbers (UCP mode).
  CHECK(chunks("café 日本語 ٣٤") == V{"café", " 日本語", " ٣٤"});
  CHECK(chunks("").empty());
}

TEST_CASE("pretokenizer chunks concatenate to the input, invalid UTF-8 included", "[tokenizer][pretokenizer]") {
  std::vector<std::string> texts = moxlab::test::tricky_texts();
  texts.push_back(std::string("bad \xff\xfe bytes \xc3 cut \x80\x80 and a nul \0 inside", 40));
  texts.push_back("\xe6\x97\xa5\xe6\x97");  // a truncated 3-byte character at the end
  for (const auto& [name, text] : moxlab::test::real_texts(50000)) texts.push_back(text);
  for (const auto& t : texts) {
    std::string joined;
    std::size_t n = 0, empty = 0;
    gpt2_pretokenizer().split(t, [&](std::string_view c) {
      empty += c.empty();
      joined += c;
      ++n;
    });
    CHECK(empty == 0);
    CHECK(joined == t);
    if (!t.empty()) CHECK(n > 0);
  }
  // Invalid bytes become chunks of their own between the regex matches.
  CHECK(chunks("ab\xff" "cd") == std::vector<std::string>{"ab", "\xff", "cd"});
}
