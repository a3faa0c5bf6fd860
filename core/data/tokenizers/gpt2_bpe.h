// Gpt2Bpe: OpenAI's GPT-2 tokenizer (kind "gpt2") from its two files in one directory:
//   encoder.json  token string -> id, where each byte is written as one printable Unicode character
//                 (GPT-2's bytes_to_unicode table);
//   vocab.bpe     "#version" line, then one merge "left right" per line, in rank order.
// Encoding is GPT-2's: the GPT-2 pre-tokenizer regex, bytes mapped to their single-byte tokens,
// merges by rank. eos_id() is <|endoftext|> (50256 in the real files).
#pragma once
#include <string>

#include "core/data/tokenizers/byte_bpe_codec.h"

namespace moxlab {

// identity(): SHA-256 over the contents of encoder.json followed by vocab.bpe.
class Gpt2Bpe : public ByteBpeCodec {
 public:
  // dir holds encoder.json and vocab.bpe; throws Error naming the file that is missing or malformed.
  explicit Gpt2Bpe(const std::string& dir);

  std::int32_t eos_id() const override { return eos_; }
  std::string kind() const override { return "gpt2"; }

 private:
  std::int32_t eos_ = -1;
};

}  // namespace moxlab
