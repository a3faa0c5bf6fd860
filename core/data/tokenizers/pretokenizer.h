// GPT-2 pre-tokenizer: splits text into the chunks BPE merges never cross (words with their leading
// space, digit runs, punctuation runs, whitespace runs, English contractions), using GPT-2's regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// compiled once with PCRE2 (UTF + UCP, JIT). Shared by ByteLevelBpe, its trainer and Gpt2Bpe.
// The chunks always concatenate to the input exactly: bytes that are not valid UTF-8 (which the
// regex cannot match) come back as chunks of their own, so byte-level tokenizers stay lossless.
#pragma once
#include <functional>
#include <string_view>
#include <vector>

namespace moxlab {

class Gpt2PreTokenizer {
 public:
  Gpt2PreTokenizer();
  ~Gpt2PreTokenizer();
  Gpt2PreTokenizer(const Gpt2PreTokenizer&) = delete;
  Gpt2PreTokenizer& operator=(const Gpt2PreTokenizer&) = delete;

  // Calls on_chunk for each chunk in text order. Thread-safe (match state is per call).
  void split(std::string_view text, const std::function<void(std::string_view)>& on_chunk) const;
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  void* code_;  // pcre2_code_8*, kept opaque so users of this header need no PCRE2 include
};

// The process-wide instance (compiled on first use; compiling per tokenizer would be wasted work).
const Gpt2PreTokenizer& gpt2_pretokenizer();

}  // namespace moxlab
