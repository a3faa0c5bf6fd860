// ByteLevelBpe: moxlab's own byte-level BPE tokenizer (kind "bpe").
// Vocabulary: ids 0..255 are the raw bytes, 256.. the learned merges in order, and one special
// token <|endoftext|> as the last id (its eos_id). Text is pre-tokenized with the GPT-2 pattern and
// merged by rank, so any byte string round-trips exactly. Train one with train_byte_level_bpe()
// (bpe_trainer.h); files are JSON:
//   {"kind":"moxlab-bpe","version":1,"vocab_size":N,"merges":[[a,b],...]}
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/data/tokenizers/byte_bpe_codec.h"

namespace moxlab {

// identity(): SHA-256 of the file it was loaded from, or of to_json() when built in memory (equal after save).
class ByteLevelBpe : public ByteBpeCodec {
 public:
  using Merge = std::pair<std::int32_t, std::int32_t>;
  static constexpr const char* kEndOfText = "<|endoftext|>";

  // Merge i creates id 256 + i from two earlier ids. Throws Error if a merge refers to an id that does
  // not exist yet or repeats a pair.
  explicit ByteLevelBpe(std::vector<Merge> merges);

  // Reads a moxlab-bpe JSON file; throws Error naming the file when it is missing or malformed.
  static ByteLevelBpe load(const std::string& path);
  // Writes to_json() atomically (a crash leaves the old file or the new one).
  void save(const std::string& path) const;
  // The canonical file content: one merge per line, so vocabularies diff well.
  std::string to_json() const;

  const std::vector<Merge>& merges() const { return merges_; }

  std::int32_t eos_id() const override { return static_cast<std::int32_t>(256 + merges_.size()); }
  std::string kind() const override { return "bpe"; }

 private:
  std::vector<Merge> merges_;
};

}  // namespace moxlab
