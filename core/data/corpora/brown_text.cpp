#include "core/data/corpora/brown_text.h"

#include <sstream>

namespace moxlab {

namespace {

bool attaches_left(const std::string& w) {
  static const char* const kLeft[] = {",", ".", ";", ":", "!", "?", ")", "]", "}", "''", "'",
                                      "'s", "'S", "n't", "N'T", "'re", "'ve", "'ll", "'d", "'m"};
  for (const char* k : kLeft)
    if (w == k) return true;
  return false;
}

bool attaches_right(const std::string& w) { return w == "``" || w == "(" || w == "[" || w == "{" || w == "`"; }

}  // namespace

std::string brown_strip_tag(const std::string& token) {
  auto slash = token.rfind('/');
  // A token without a tag (or "/" alone) is kept whole rather than dropped.
  if (slash == std::string::npos || slash == 0) return token;
  return token.substr(0, slash);
}

std::vector<std::string> brown_normalize_punctuation(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const auto& w : words) {
    if (w.empty()) continue;
    if ((w == "?" || w == "!") && !out.empty() && out.back() == w) continue;  // "? ?" -> "?"
    out.push_back(w);
  }
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    const auto& next = out[i + 1];
    if (out[i] == "''" && (next == "," || next == "." || next == "?" || next == "!")) {
      std::swap(out[i], out[i + 1]);
      ++i;
    }
  }
  return out;
}

std::string brown_detokenize(const std::vector<std::string>& raw_words) {
  const auto words = brown_normalize_punctuation(raw_words);
  std::string out;
  bool glue_next = true;  // no space before the first word
  for (const auto& w : words) {
    if (w.empty()) continue;
    if (!glue_next && !attaches_left(w)) out += ' ';
    out += (w == "``" || w == "''") ? std::string("\"") : w;
    glue_next = attaches_right(w);
  }
  return out;
}

std::string brown_file_to_text(const std::string& tagged) {
  std::istringstream in(tagged);
  std::string line;
  std::vector<std::string> paragraphs;
  std::string current;
  bool after_heading = false;
  auto flush = [&] {
    if (!current.empty()) paragraphs.push_back(std::move(current));
    current.clear();
  };
  while (std::getline(in, line)) {
    std::istringstream tokens(line);
    std::vector<std::string> words;
    bool heading = true;  // every tag ends in "-hl": a headline, kept as its own paragraph
    for (std::string tok; tokens >> tok;) {
      auto slash = tok.rfind('/');
      bool hl = slash != std::string::npos && tok.size() >= 3 && tok.compare(tok.size() - 3, 3, "-hl") == 0;
      heading = heading && hl;
      words.push_back(brown_strip_tag(tok));
    }
    if (words.empty()) continue;
    bool starts_paragraph = line[0] == '\t' || heading || after_heading;
    if (starts_paragraph) flush();
    if (!current.empty()) current += ' ';
    current += brown_detokenize(words);
    after_heading = heading;
  }
  flush();
  std::string out;
  for (std::size_t i = 0; i < paragraphs.size(); ++i) {
    if (i) out += "\n\n";
    out += paragraphs[i];
  }
  out += '\n';
  return out;
}

}  // namespace moxlab
