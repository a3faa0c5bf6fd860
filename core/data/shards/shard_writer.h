// Writes a CorpusSplit as a token-shard folder (format: token_shards.h).
//
// Documents are tokenized on several threads (std::thread over documents, each result stored in
// its document's slot, so the files do not depend on scheduling), one (domain, split) group at a
// time to bound memory. Everything is written into a fresh temporary folder next to `dir`, fsynced,
// and renamed to `dir` only when complete: a crash leaves at most an unused "<dir>.tmp-*" folder.
#pragma once
#include <string>

#include "core/data/corpora/corpus_split.h"
#include "core/data/tokenizers/tokenizer.h"

namespace moxlab {

struct ShardWriteOptions {
  int threads = 0;  // <= 0: std::thread::hardware_concurrency()
};

// Tokenizes `split` with `tokenizer` into `dir` and returns the data digest. Throws Error when
// `dir` already exists, or when the tokenizer yields an id outside [0, vocab_size). Requires
// tokenizer.encode() to be safe to call concurrently (it is const). If another process publishes
// `dir` while this one writes, the other's folder is kept and this one's discarded.
std::string write_token_shards(const CorpusSplit& split, const Tokenizer& tokenizer, const std::string& dir,
                               const ShardWriteOptions& options = {});

}  // namespace moxlab
