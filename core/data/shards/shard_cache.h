// The token-shard cache: one folder per (corpus, split, tokenizer), named by a hash of all of them,
// so different configurations never share shards and an unchanged one is tokenized only once.
//
// Key = SHA-256 of {shard format version, corpus_spec_json (caps, domains, user corpora, seed,
// val_fraction, ...), corpus_split_digest (the actual text of every train and val document, so a
// changed package or user file is noticed), tokenizer kind, identity, vocab size and separator}.
// Folder: <cache_root>/shards-<first 24 hex digits of the key>.
#pragma once
#include <string>

#include "core/data/corpora/corpus_spec.h"
#include "core/data/shards/shard_writer.h"
#include "core/data/tokenizers/tokenizer.h"

namespace moxlab {

std::string shard_cache_key(const CorpusSpec& spec, const CorpusSplit& split, const Tokenizer& tokenizer);

// Returns the shard folder for the spec and tokenizer, tokenizing the corpus into it first when it
// is not cached (or when the cached folder does not open cleanly: it is then rebuilt). The
// corpus is built and split here; use the second form when the caller already has the split
// (e.g. it trained the BPE tokenizer on train_texts(split)).
std::string build_or_open_shards(const CorpusSpec& spec, const Tokenizer& tokenizer, const std::string& cache_root,
                                 const ShardWriteOptions& options = {});
std::string build_or_open_shards(const CorpusSpec& spec, const CorpusSplit& split, const Tokenizer& tokenizer,
                                 const std::string& cache_root, const ShardWriteOptions& options = {});

}  // namespace moxlab
