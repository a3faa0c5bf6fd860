// Readers for the Debian-packaged corpora: bible-kjv, libpython3.11-stdlib, python3.11-doc and
// wordnet-base (see scripts/setup.sh).
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/corpora/file_listing.h"
#include "core/data/corpora/gzip_reader.h"
#include "core/data/corpora/package_sources.h"
#include "core/data/corpora/text_cleanup.h"

namespace moxlab {

namespace {

std::string run_and_capture(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) throw Error("cannot run: " + command);
  std::string out;
  char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  int status = ::pclose(p);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("command failed: " + command);
  return out;
}

bool is_all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string pad3(const std::string& digits) {
  return digits.size() >= 3 ? digits : std::string(3 - digits.size(), '0') + digits;
}

}  // namespace

std::vector<Document> parse_bible_output(const std::string& output) {
  // Pretty-printed format: "Genesis 1" on a line of its own, then "  1 In the beginning ...".
  std::vector<Document> docs;
  std::string heading;
  std::vector<std::string> verses;
  auto flush = [&] {
    if (heading.empty() || verses.empty()) return;
    std::string text = heading + "\n\n";
    for (const auto& v : verses) text += v + "\n";
    auto space = heading.rfind(' ');
    std::string book = heading.substr(0, space);
    for (auto& c : book)
      if (c == ' ') c = '_';
    docs.push_back({"", "kjv/" + book + "_" + pad3(heading.substr(space + 1)), clean_package_text(text)});
    verses.clear();
  };
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line[0] != ' ' && line[0] != '\t') {
      auto space = line.rfind(' ');
      if (space != std::string::npos && is_all_digits(line.substr(space + 1))) {
        flush();
        heading = line;
        continue;
      }
    }
    std::string body = line.substr(line.find_first_not_of(" \t"));
    auto space = body.find(' ');
    if (space != std::string::npos && is_all_digits(body.substr(0, space))) {
      verses.push_back(body.substr(space + 1));  // verse numbers dropped: one verse per line instead
    } else if (!verses.empty()) {
      verses.back() += " " + body;  // a wrapped continuation line
    }
  }
  flush();
  return docs;
}

std::vector<Document> read_kjv_bible() {
  std::string bible = find_on_path("bible");
  require(!bible.empty(), "the `bible` program (package bible-kjv) is not on PATH");
  // -l1000: no line wrapping (the longest verse is ~530 characters); stdin closed: no prompt.
  auto docs = parse_bible_output(run_and_capture("'" + bible + "' -l1000 'Gen1:1-Rev22:21' </dev/null"));
  require(docs.size() > 1000, "unexpected output from `bible` (" + std::to_string(docs.size()) +
                                  " chapters); is bible-kjv-text installed?");
  return docs;
}

std::vector<Document> read_python_stdlib(const std::string& root) {
  // Folders that other Debian packages (python3-distutils, python3-lib2to3, python3.11-venv,
  // libpython3.11-testsuite, idle, python3-tk, ...) or the machine's configuration add.
  static const std::set<std::string> kSkipTop = {"distutils",  "lib2to3",  "ensurepip",     "venv",
                                                 "test",       "idlelib",  "tkinter",       "turtledemo",
                                                 "site-packages", "dist-packages"};
  auto keep = [](const std::string& rel) {
    if (!ends_with(rel, ".py")) return false;
    if (rel.find("__pycache__") != std::string::npos) return false;
    auto slash = rel.find('/');
    if (slash != std::string::npos) {
      std::string top = rel.substr(0, slash);
      if (kSkipTop.count(top) || top.rfind("config-", 0) == 0) return false;
    }
    return rel.rfind("_sysconfigdata", 0) != 0;  // generated per machine
  };
  std::vector<Document> docs;
  for (const auto& f : list_files_sorted(root, keep)) {
    std::string text = clean_package_text(read_file(f.path));
    if (!text.empty()) docs.push_back({"", "python3.11/" + f.relative, std::move(text)});
  }
  require(!docs.empty(), "no .py files under " + root);
  return docs;
}

std::vector<Document> read_python_doc_sources(const std::string& root) {
  auto keep = [](const std::string& rel) { return ends_with(rel, ".rst.txt") || ends_with(rel, ".rst.txt.gz"); };
  std::vector<Document> docs;
  for (const auto& f : list_files_sorted(root, keep)) {
    std::string rel = f.relative;
    if (ends_with(rel, ".gz")) rel.resize(rel.size() - 3);
    std::string text = clean_package_text(read_maybe_gzip(f.path));
    if (!text.empty()) docs.push_back({"", "python3.11-doc/" + rel, std::move(text)});
  }
  require(!docs.empty(), "no .rst.txt files under " + root);
  return docs;
}

std::string wordnet_gloss_line(const std::string& data_line) {
  // "offset lex_filenum ss_type w_cnt(hex) word lex_id [word lex_id...] p_cnt ... | gloss"
  if (data_line.empty() || data_line[0] == ' ') return "";  // licence header lines start with spaces
  auto bar = data_line.find(" | ");
  if (bar == std::string::npos) return "";
  std::istringstream in(data_line.substr(0, bar));
  std::string offset, lexfile, type, count_hex;
  if (!(in >> offset >> lexfile >> type >> count_hex)) return "";
  int count = static_cast<int>(std::strtol(count_hex.c_str(), nullptr, 16));
  std::string words;
  for (int i = 0; i < count; ++i) {
    std::string word, lex_id;
    if (!(in >> word >> lex_id)) return "";
    auto paren = word.find('(');  // adjective position markers: "(a)", "(p)", "(ip)"
    if (paren != std::string::npos && word.back() == ')') word.resize(paren);
    for (auto& c : word)
      if (c == '_') c = ' ';
    if (!words.empty()) words += ", ";
    words += word;
  }
  const char* pos = type == "n" ? "n." : type == "v" ? "v." : type == "r" ? "adv." : "adj.";
  std::string gloss = data_line.substr(bar + 3);
  while (!gloss.empty() && (gloss.back() == ' ' || gloss.back() == '\n' || gloss.back() == '\r')) gloss.pop_back();
  return words + " (" + pos + "): " + gloss;
}

std::vector<Document> read_wordnet(const std::string& pos, const std::string& root) {
  const std::string path = root + "/data." + pos;
  std::istringstream in(read_file(path));
  constexpr int kSynsetsPerDocument = 400;
  std::vector<Document> docs;
  std::string text;
  int in_doc = 0;
  auto flush = [&] {
    if (in_doc == 0) return;
    char name[64];
    std::snprintf(name, sizeof(name), "wordnet/%s/%04zu", pos.c_str(), docs.size() + 1);
    docs.push_back({"", name, clean_package_text(text)});
    text.clear();
    in_doc = 0;
  };
  for (std::string line; std::getline(in, line);) {
    std::string gloss = wordnet_gloss_line(line);
    if (gloss.empty()) continue;
    text += gloss + "\n";
    if (++in_doc == kSynsetsPerDocument) flush();
  }
  flush();
  require(!docs.empty(), "no synsets in " + path);
  return docs;
}

}  // namespace moxlab
