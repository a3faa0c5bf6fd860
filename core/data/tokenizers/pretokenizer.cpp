#include "core/data/tokenizers/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <string>

#include "core/common/error.h"

namespace moxlab {
namespace {

constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

}  // namespace

Gpt2PreTokenizer::Gpt2PreTokenizer() {
  int err = 0;
  PCRE2_SIZE err_offset = 0;
  // MATCH_INVALID_UTF: invalid UTF-8 is skipped by the matcher instead of failing the whole call;
  // split() hands the skipped bytes out as their own chunks.
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kGpt2Pattern), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_offset,
                                   nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw Error("GPT-2 pre-tokenizer regex failed to compile: " + std::string(reinterpret_cast<char*>(msg)));
  }
  // JIT makes matching several times faster; when unavailable pcre2_match interprets instead.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  code_ = code;
}

Gpt2PreTokenizer::~Gpt2PreTokenizer() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

void Gpt2PreTokenizer::split(std::string_view text,
                             const std::function<void(std::string_view)>& on_chunk) const {
  auto* code = static_cast<pcre2_code*>(code_);
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> md(pcre2_match_data_create_from_pattern(code, nullptr));
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t pos = 0;
  while (pos < text.size()) {
    int rc = pcre2_match(code, subject, text.size(), pos, 0, md.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) {
      on_chunk(text.substr(pos));  // only invalid UTF-8 is left
      return;
    }
    if (rc < 0) throw Error("GPT-2 pre-tokenizer: PCRE2 match error " + std::to_string(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    std::size_t start = ov[0], end = ov[1];
    if (start > pos) on_chunk(text.substr(pos, start - pos));  // skipped invalid UTF-8
    // Every alternative consumes at least one character, so end > start; guard anyway so a
    // surprise empty match can never loop forever.
    if (end <= start) end = start + 1;
    on_chunk(text.substr(start, end - start));
    pos = end;
  }
}

std::vector<std::string_view> Gpt2PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> chunks;
  split(text, [&](std::string_view c) { chunks.push_back(c); });
  return chunks;
}

const Gpt2PreTokenizer& gpt2_pretokenizer() {
  static const Gpt2PreTokenizer instance;
  return instance;
}

}  // namespace moxlab
