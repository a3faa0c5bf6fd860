// Train/val split of a multi-domain corpus, per domain, identical on every machine for a seed.
//
// Per domain: documents are put in a canonical order (by source, then text), shuffled by a
// SplitMix64 Fisher-Yates seeded from (seed, domain name), and taken from the front into val until
// val holds val_fraction of the domain's bytes, or min_val_bytes when that is larger and still at
// most a quarter of the domain. A document that would take val past half the domain stays in
// train. val always gets at least one document and train keeps at least one: when no whole
// document fits (typically a domain that is one huge document), a document is cut at a paragraph
// boundary (else a line, a space, a UTF-8 boundary) and its tail becomes val ("<source>#val").
// No std::shuffle or std::uniform_int_distribution: their output differs between C++ libraries.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/corpora/document.h"

namespace moxlab {

struct SplitOptions {
  double val_fraction = 0.05;        // of each domain's bytes, in (0, 1)
  std::uint64_t seed = 1234;
  std::int64_t min_val_bytes = 16384;
};

struct DomainSplit {
  std::string domain;
  std::vector<Document> train;  // in shuffled order (the order they are written to shards)
  std::vector<Document> val;
  std::int64_t train_bytes() const;
  std::int64_t val_bytes() const;
};

struct CorpusSplit {
  SplitOptions options;
  std::vector<DomainSplit> domains;  // sorted by domain name
  const DomainSplit* find(const std::string& domain) const;  // nullptr when absent
};

// Throws Error for an empty corpus, val_fraction outside (0, 1), or a domain under 2 bytes.
CorpusSplit split_corpus(std::vector<Document> docs, const SplitOptions& options);

// Train-split text only, for fitting a tokenizer (val text must never reach it). With
// max_bytes > 0 the domains are drawn from in turn (documents in their shuffled order, the last
// one cut at a line boundary) until max_bytes, so every domain is represented; <= 0: all of it.
std::vector<std::string> train_texts(const CorpusSplit& split, std::int64_t max_bytes = 0);

// Cuts text near byte position `at` at the nearest paragraph break (else line break, space,
// UTF-8 character boundary); returns the cut position, strictly inside (0, size) for size >= 2.
std::size_t find_text_cut(const std::string& text, std::size_t at);

}  // namespace moxlab
