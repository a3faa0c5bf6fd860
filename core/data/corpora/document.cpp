#include "core/data/corpora/document.h"

#include <map>

#include "core/common/error.h"

namespace moxlab {

std::vector<DomainStats> domain_stats(const std::vector<Document>& docs) {
  std::map<std::string, DomainStats> by_domain;
  for (const auto& d : docs) {
    auto& s = by_domain[d.domain];
    s.domain = d.domain;
    s.documents += 1;
    s.bytes += static_cast<std::int64_t>(d.text.size());
  }
  std::vector<DomainStats> out;
  for (auto& [name, s] : by_domain) out.push_back(s);
  return out;
}

bool valid_domain_label(const std::string& label) {
  if (label.empty() || label.size() > 64) return false;
  for (char c : label) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void require_domain_label(const std::string& label) {
  require(valid_domain_label(label),
          "invalid domain label '" + label + "': use 1-64 characters from a-z, 0-9, '_' and '-'");
}

namespace {
// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is malformed
// (overlong forms, surrogates and code points above U+10FFFF count as malformed).
std::size_t utf8_sequence_length(const std::string& s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n;
  std::uint32_t cp;
  if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static const std::uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}
}  // namespace

std::string sanitize_utf8(std::string text) {
  std::size_t i = 0;
  while (i < text.size()) {  // fast path: scan until the first malformed byte
    std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) break;
    i += n;
  }
  if (i == text.size()) return text;
  std::string out = text.substr(0, i);
  while (i < text.size()) {
    std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace moxlab
