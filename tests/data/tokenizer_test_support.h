// Shared helpers of the tokenizer tests: real texts to round-trip and scratch files.
// Real text comes from files Debian installs here (/usr/lib/python3.11/*.py, always present) and,
// when ../shared/data exists, from its corpora; tests that need a shared file skip with a WARN.
#pragma once
#include "tests/scratch_dir.h"
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/common/paths.h"

namespace moxlab::test {

// Path of a file under the shared data folder, or "" (with a WARN naming it) when absent.
inline std::string shared_file(const std::string& rel) {
  const std::string dir = shared_data_dir();
  const std::string path = dir.empty() ? "" : dir + "/" + rel;
  if (path.empty() || !std::filesystem::exists(path)) {
    WARN("skipping: shared data file " << rel << " is not available (no ../shared/data)");
    return "";
  }
  return path;
}

// Up to max_bytes of a file, cut back to a UTF-8 character boundary.
inline std::string read_prefix(const std::string& path, std::size_t max_bytes = SIZE_MAX) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max_bytes) {
    s.resize(max_bytes);
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
    if (!s.empty() && (static_cast<unsigned char>(s.back()) & 0x80)) s.pop_back();  // a cut lead byte
  }
  return s;
}

// Python standard-library sources shipped by Debian (code: indentation, digits, quotes, some
// non-ASCII). Sorted, so the selection is stable.
inline std::vector<std::string> python_stdlib_files() {
  std::vector<std::string> files;
  const std::string dir = "/usr/lib/python3.11";
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".py") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// (name, text) samples of real text, each at most max_bytes: always a few stdlib sources with
// non-ASCII characters, plus prose, XML and JSONL from the shared corpora when present.
inline std::vector<std::pair<std::string, std::string>> real_texts(std::size_t max_bytes = 200000) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* f : {"/usr/lib/python3.11/statistics.py", "/usr/lib/python3.11/zipfile.py",
                        "/usr/lib/python3.11/functools.py"})
    if (std::filesystem::exists(f)) out.emplace_back(f, read_prefix(f, max_bytes));
  const std::string dir = shared_data_dir();
  if (dir.empty()) {
    WARN("shared corpora not available (no ../shared/data): round trips use Debian's Python sources only");
    return out;
  }
  for (const char* rel : {"corpora/books/moby_dick.txt", "corpora/books/tiny_shakespeare_input.txt",
                          "corpora/brown/news.txt", "corpora/stackexchange/beer.stackexchange.Posts.xml",
                          "corpora/instructions/dolly_hhrlhf_train_small.jsonl", "corpora/arxiv/arxiv.jsonl"}) {
    const std::string path = dir + "/" + rel;
    if (std::filesystem::exists(path)) out.emplace_back(rel, read_prefix(path, max_bytes));
  }
  return out;
}

// Hand-written strings that stress the edges: contractions, digits, runs of spaces, tabs and
// newlines, accents, CJK, Cyrillic, emoji, no-break space.
inline std::vector<std::string> tricky_texts() {
  return {"Hello world",
          "I'm sure they'll say we'd've done it; it's John's, isn't it? We'VE DON'T",
          "  leading spaces and   runs   of spaces  ",
          "tabs\tand\t\ttabs\nnew\n\nlines\r\nwindows\n   \n",
          "digits 1234567890 3.14159 1,000,000 2024-01-02 x86_64",
          "naïve café résumé Ångström façade Zürich",
          "日本語のテキストと中文字符",
          "Привет, мир! Ελληνικά κείμενα",
          "emoji 😀👍🏽 and 🇫🇷 flags",
          "no\u00a0break\u00a0space",
          "punctuation!!! ??? ... --- (((brackets))) {\"json\": [1, 2]}",
          "   ",
          "\n",
          "a",
          "end with space "};
}

using moxlab::testing::ScratchDir;

inline void write_bytes(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  REQUIRE(out.good());
}

}  // namespace moxlab::test
