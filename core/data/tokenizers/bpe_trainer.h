// Trainer for moxlab's ByteLevelBpe.
// Texts are pre-tokenized with the GPT-2 pattern and only the unique chunks ("words") and their
// counts are kept; merges are then learned with incremental pair statistics: a pair -> count table,
// a pair -> words index, and a max-heap with lazy invalidation, so each merge only revisits the
// words that contain the merged pair. Pairs are counted at every adjacent position (overlaps
// included) and ties are broken deterministically: highest count, then the smallest (left, right)
// ids. Same texts and vocab size give the same merges, independent of text order.
//
//   BpeTrainer t;  t.add_text(...);  ...;  ByteLevelBpe bpe = t.train(4096);  bpe.save("bpe.json");
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/data/tokenizers/byte_level_bpe.h"

namespace moxlab {

struct BpeTrainOptions {
  // Total vocabulary: 256 bytes + merges + <|endoftext|>; at least 257.
  std::int32_t vocab_size = 4096;
  // Stop early (smaller vocabulary) when the best pair occurs fewer times than this: a pair seen
  // once only memorises the corpus.
  std::int64_t min_pair_count = 2;
};

class BpeTrainer {
 public:
  // Pre-tokenizes text and adds its chunks to the word counts. Can be called any number of times
  // (streaming); memory grows with the number of distinct chunks, not with the text.
  void add_text(std::string_view text);
  std::size_t unique_words() const { return word_counts_.size(); }

  // Learns the merges (in order) for the counted words.
  std::vector<ByteLevelBpe::Merge> learn_merges(const BpeTrainOptions& options) const;
  ByteLevelBpe train(const BpeTrainOptions& options) const { return ByteLevelBpe(learn_merges(options)); }
  ByteLevelBpe train(std::int32_t vocab_size) const {
    BpeTrainOptions o;
    o.vocab_size = vocab_size;
    return train(o);
  }

 private:
  std::unordered_map<std::string, std::int64_t> word_counts_;
};

// Convenience forms. next_text fills its argument and returns true, or returns false at the end.
ByteLevelBpe train_byte_level_bpe(const std::vector<std::string>& texts, std::int32_t vocab_size);
ByteLevelBpe train_byte_level_bpe(const std::function<bool(std::string&)>& next_text, std::int32_t vocab_size);

}  // namespace moxlab
