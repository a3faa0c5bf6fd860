#include "core/data/corpora/user_corpus.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/data/corpora/file_listing.h"
#include "core/data/corpora/gzip_reader.h"

namespace moxlab {

namespace {

bool is_txt(const std::string& p) { return ends_with(p, ".txt") || ends_with(p, ".txt.gz"); }
bool is_jsonl(const std::string& p) { return ends_with(p, ".jsonl") || ends_with(p, ".jsonl.gz"); }

std::vector<Document> read_jsonl(const std::string& path, const std::string& content, const std::string& domain,
                                 const std::string& field) {
  std::vector<Document> docs;
  std::size_t line_no = 0, pos = 0;
  while (pos < content.size()) {
    std::size_t end = content.find('\n', pos);
    if (end == std::string::npos) end = content.size();
    std::string line = content.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw Error(where + ": not valid JSON (" + e.what() + ")");
    }
    if (!j.is_object() || !j.contains(field)) throw Error(where + ": no field \"" + field + "\"");
    if (!j[field].is_string()) throw Error(where + ": field \"" + field + "\" is not a string");
    std::string text = sanitize_utf8(j[field].get<std::string>());
    if (text.empty()) continue;
    docs.push_back({domain, path + ":" + std::to_string(line_no), std::move(text)});
  }
  return docs;
}

}  // namespace

UserCorpus parse_user_corpus(const std::string& spec) {
  auto eq = spec.find('=');
  require(eq != std::string::npos && eq + 1 < spec.size(),
          "user corpus '" + spec + "' must be DOMAIN=PATH (e.g. notes=/data/notes.txt)");
  UserCorpus c{spec.substr(0, eq), spec.substr(eq + 1)};
  require_domain_label(c.domain);
  return c;
}

std::vector<std::string> user_corpus_files(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& f : list_files_sorted(path, [](const std::string& rel) { return is_txt(rel) || is_jsonl(rel); }))
      files.push_back(f.path);
    require(!files.empty(), "user corpus folder " + path + " has no .txt, .jsonl, .txt.gz or .jsonl.gz files");
    return files;
  }
  require(file_exists(path), "user corpus not found: " + path);
  require(is_txt(path) || is_jsonl(path),
          "user corpus " + path + ": unsupported file type (use .txt, .jsonl, .txt.gz or .jsonl.gz)");
  return {path};
}

std::vector<Document> split_text_into_documents(const std::string& raw, const std::string& domain,
                                                const std::string& source_prefix, std::int64_t chunk_bytes) {
  std::string text = sanitize_utf8(raw);
  std::vector<Document> docs;
  auto emit = [&](std::size_t begin, std::size_t end) {
    if (text.find_first_not_of(" \t\r\n", begin) >= end) return;  // whitespace only
    docs.push_back({domain, source_prefix + "#" + std::to_string(docs.size() + 1), text.substr(begin, end - begin)});
  };
  if (chunk_bytes <= 0 || static_cast<std::int64_t>(text.size()) <= chunk_bytes) {
    emit(0, text.size());
    return docs;
  }
  // Paragraph ends: just after each run of blank lines ("\n\n", "\n\n\n", ...). A chunk grows
  // paragraph by paragraph and is closed before the paragraph that would push it over the bound.
  std::size_t chunk_begin = 0, last_break = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t blank = text.find("\n\n", pos);
    std::size_t para_end = blank == std::string::npos ? text.size() : text.find_first_not_of('\n', blank);
    if (para_end == std::string::npos) para_end = text.size();
    if (static_cast<std::int64_t>(para_end - chunk_begin) > chunk_bytes && last_break > chunk_begin) {
      emit(chunk_begin, last_break);
      chunk_begin = last_break;
    }
    last_break = para_end;
    pos = para_end;
  }
  emit(chunk_begin, text.size());
  return docs;
}

std::vector<Document> read_user_corpus(const UserCorpus& corpus, const UserCorpusOptions& options) {
  require_domain_label(corpus.domain);
  std::vector<Document> docs;
  for (const auto& file : user_corpus_files(corpus.path)) {
    std::string content = read_maybe_gzip(file);
    auto part = is_jsonl(file) ? read_jsonl(file, content, corpus.domain, options.jsonl_field)
                               : split_text_into_documents(content, corpus.domain, file, options.txt_chunk_bytes);
    for (auto& d : part) docs.push_back(std::move(d));
  }
  return docs;
}

}  // namespace moxlab
