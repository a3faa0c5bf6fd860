// Gpt2Bpe: OpenAI's GPT-2 tokenizer (kind "gpt2") from its two files in one directory:
//   encoder.json  token string -> id, where each byte is written as one printable Unicode character
//                 (GPT-2's bytes_to_unicode table);
//   vocab.bpe     "#version" line, then one merge "left right" per line, in rank order.
// Encoding is GPT-2's: the GPT-2 pre-tokenizer regex, bytes mapped to their single-byte tokens,
// merges by rank. eos_id() is <|endoftext|> (50256 in the real files).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "core/data/bpe_merges.h"
#include "core/data/tokenizer.h"

namespace moxlab {

class Gpt2Bpe : public Tokenizer {
 public:
  // dir holds encoder.json and vocab.bpe; throws Error naming the file that is missing or malformed.
  explicit Gpt2Bpe(const std::string& dir);

  std::vector<std::int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<std::int32_t>& ids) const override;
  std::string token_bytes(std::int32_t id, std::int32_t prev) const override;
  std::int32_t vocab_size() const override { return static_cast<std::int32_t>(bytes_.size()); }
  std::int32_t eos_id() const override { return eos_; }
  std::string kind() const override { return "gpt2"; }
  // SHA-256 over the contents of encoder.json followed by vocab.bpe.
  std::string identity() const override { return identity_; }

 private:
  BpeMergeTable table_;
  std::array<std::int32_t, 256> byte_ids_{};
  std::vector<std::string> bytes_;  // id -> raw bytes
  std::int32_t eos_ = -1;
  std::string identity_;
};

}  // namespace moxlab
