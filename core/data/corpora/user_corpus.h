// User corpora: text files added to the corpus under a domain label ("DOMAIN=PATH" in configs).
//
// Accepted files: .txt, .jsonl, and the gzip-compressed .txt.gz and .jsonl.gz. A folder stands for
// all such files under it (recursively), in sorted order.
//   .txt    split at blank-line paragraph boundaries into documents of at most txt_chunk_bytes
//           (default 64 KiB); a paragraph is never cut, so one longer paragraph is a document of
//           its own, and a small file is one document. Chunking lets one big text file still have
//           a val split and shuffle, at the price of a document separator every ~64 KiB.
//   .jsonl  one JSON object per line, the document is the string field `jsonl_field` (default
//           "text"); a blank line is skipped; a line that is not JSON or lacks the field (or whose
//           field is not a string) is an Error naming the file and line number.
// Text is kept byte for byte, except that malformed UTF-8 becomes U+FFFD.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/corpora/document.h"

namespace moxlab {

struct UserCorpus {
  std::string domain;  // label, see valid_domain_label()
  std::string path;    // file or folder
};

struct UserCorpusOptions {
  std::string jsonl_field = "text";
  std::int64_t txt_chunk_bytes = 65536;
};

// Parses "DOMAIN=PATH"; throws Error on a missing '=' or an invalid label.
UserCorpus parse_user_corpus(const std::string& spec);

// Files a user corpus path stands for (one file, or the matching files of a folder, sorted).
// Throws Error for a missing path, an unsupported extension or a folder with no matching file.
std::vector<std::string> user_corpus_files(const std::string& path);

// Documents of one user corpus, labelled with its domain, in file order.
std::vector<Document> read_user_corpus(const UserCorpus& corpus, const UserCorpusOptions& options = {});

// The .txt rule above, on text already in memory (source_prefix + "#<n>" names each chunk).
std::vector<Document> split_text_into_documents(const std::string& text, const std::string& domain,
                                                const std::string& source_prefix, std::int64_t chunk_bytes);

}  // namespace moxlab
