// Llama2cTokenizer: Karpathy's llama2.c tokenizer.bin (kind "llama2c"), e.g. the LLaMA-2 vocabulary
// or stories260K's tok512.bin. File format (little-endian): int32 max_token_length, then for each
// token: float32 score, int32 byte length, the bytes. Ids 0/1/2 are <unk>/BOS/EOS and ids 3..258
// the byte-fallback pieces "<0x00>".."<0xFF>"; SentencePiece's "▁" is already a plain space.
//
// encode() gives the ids llama2.c's run.c encode() gives (without BOS/EOS): a dummy-prefix " "
// token when the text is non-empty, one token per UTF-8 code point (bytes + 3 when the code point is
// not in the vocabulary), then repeatedly the adjacent pair whose concatenation is a token with the
// highest score is merged (leftmost on ties). It runs in O(n log n) instead of run.c's O(n^2), and
// word by word with a per-call cache when the vocabulary allows it (see encode()).
// decode() treats the ids as following BOS, so the dummy-prefix space is dropped and
// decode(encode(text)) == text.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "core/data/tokenizers/tokenizer.h"

namespace moxlab {

class Llama2cTokenizer : public Tokenizer {
 public:
  static constexpr std::int32_t kUnk = 0, kBos = 1, kEos = 2, kFirstByte = 3;

  // Reads the whole file; throws Error naming it when missing, truncated or malformed.
  explicit Llama2cTokenizer(const std::string& path);

  std::vector<std::int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<std::int32_t>& ids) const override;
  // As run.c prints tokens: raw-byte pieces give their byte, a piece after BOS (or at the start of
  // the text, prev < 0) loses its leading space; <unk>/BOS/EOS give nothing.
  std::string token_bytes(std::int32_t id, std::int32_t prev) const override;
  std::int32_t vocab_size() const override { return static_cast<std::int32_t>(pieces_.size()); }
  std::int32_t bos_id() const override { return kBos; }
  std::int32_t eos_id() const override { return kEos; }
  std::string kind() const override { return "llama2c"; }
  std::string identity() const override { return identity_; }  // SHA-256 of the file

  const std::string& piece(std::int32_t id) const { return pieces_.at(id); }
  float score(std::int32_t id) const { return scores_.at(id); }
  std::int32_t max_token_length() const { return max_token_length_; }

 private:
  std::int32_t find_merge(std::int32_t left, std::int32_t right) const;
  // run.c's algorithm on one piece of text (no dummy prefix added), appending to out.
  void encode_segment(std::string_view text, std::vector<std::int32_t>& out) const;

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::unordered_map<std::string, std::int32_t> lookup_;  // piece -> id (the lowest id on duplicates)
  std::unordered_map<std::uint64_t, std::int32_t> merges_;  // (left, right) -> id of left+right
  std::int32_t space_id_ = -1;                              // the dummy-prefix token " "
  bool split_at_spaces_ = false;  // no piece has a space after a non-space: encode word by word
  std::int32_t max_token_length_ = 0;
  std::string identity_;
};

}  // namespace moxlab
