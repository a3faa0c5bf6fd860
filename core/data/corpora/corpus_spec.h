// What corpus a run trains on: the package-shipped default domains (capped), user corpora, and
// the split settings. Built from the "data.*" options; hashed into the token-shard cache key.
#pragma once
#include <string>
#include <vector>

#include "core/data/corpora/corpus_split.h"
#include "core/data/data_options.h"
#include "core/data/corpora/document.h"
#include "core/data/corpora/package_corpus.h"
#include "core/data/corpora/user_corpus.h"

namespace moxlab {

struct CorpusSpec {
  bool use_package_corpus = true;  // data.corpus = "default" (true) or "none"
  PackageCorpusOptions package;
  std::vector<UserCorpus> user;    // data.extra
  UserCorpusOptions user_options;
  SplitOptions split;
};

// From the data options: corpus "default" | "none", extra "DOMAIN=PATH" entries, jsonl_field,
// domain_cap_bytes, val_fraction, split_seed. Throws Error for any other corpus value, a bad
// extra entry, or "none" with no extra corpora.
CorpusSpec corpus_spec_from_options(const DataOptions& options);

// Canonical JSON of the spec (sorted keys), without machine-specific paths of package folders.
std::string corpus_spec_json(const CorpusSpec& spec);

// All documents of the spec: the package corpus (if used) followed by the user corpora.
std::vector<Document> build_corpus(const CorpusSpec& spec);

// build_corpus + split_corpus.
CorpusSplit build_split_corpus(const CorpusSpec& spec);

// SHA-256 over every split document (domain, split, source, text), in split order.
std::string corpus_split_digest(const CorpusSplit& split);

}  // namespace moxlab
