// What the two byte-level BPE tokenizers (ByteLevelBpe, moxlab's own; Gpt2Bpe, OpenAI's files) share once
// their vocabularies are read: each id's bytes, the byte -> id map, the ranked merge table, and encoding
// (the GPT-2 pre-tokenizer, bytes to ids, merges by rank) and decoding from those. The subclasses only read
// their file formats and fill them in.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "core/data/tokenizers/bpe_merges.h"
#include "core/data/tokenizers/tokenizer.h"

namespace moxlab {

class ByteBpeCodec : public Tokenizer {
 public:
  std::vector<std::int32_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<std::int32_t>& ids) const override;
  std::string token_bytes(std::int32_t id, std::int32_t prev) const override;
  std::int32_t vocab_size() const override { return static_cast<std::int32_t>(bytes_.size()); }
  std::string identity() const override { return identity_; }

 protected:
  // vocabulary: how errors name it ("GPT-2 vocabulary").
  explicit ByteBpeCodec(std::string vocabulary) : vocabulary_(std::move(vocabulary)) {}

  BpeMergeTable table_;
  std::array<std::int32_t, 256> byte_ids_{};  // the id of each byte's single-byte token
  std::vector<std::string> bytes_;            // id -> the bytes it stands for
  std::string identity_;

 private:
  std::string vocabulary_;
};

}  // namespace moxlab
