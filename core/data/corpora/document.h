// The unit every corpus is made of: one document with its domain label and where it came from.
// Domain labels name shard files (<domain>.train.bin), so they are restricted to [a-z0-9_-].
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace moxlab {

struct Document {
  std::string domain;  // e.g. "books", "code"; see valid_domain_label()
  std::string source;  // e.g. "moby-dick/chapter_001" or "notes.txt#3": stable, for logs and ordering
  std::string text;    // UTF-8
};

// Documents and UTF-8 bytes of one domain.
struct DomainStats {
  std::string domain;
  std::int64_t documents = 0;
  std::int64_t bytes = 0;
};

// Per-domain counts, sorted by domain name.
std::vector<DomainStats> domain_stats(const std::vector<Document>& docs);

// True for a non-empty label of lower-case ASCII letters, digits, '_' and '-' (at most 64 chars).
bool valid_domain_label(const std::string& label);

// Throws Error naming the label when it is not valid_domain_label().
void require_domain_label(const std::string& label);

// Replaces every byte sequence that is not valid UTF-8 with U+FFFD, so that tokenizers whose
// pre-tokenizers run in UTF mode never see malformed input. Valid input is returned unchanged.
std::string sanitize_utf8(std::string text);

}  // namespace moxlab
