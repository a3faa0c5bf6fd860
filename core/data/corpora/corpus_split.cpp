#include "core/data/corpora/corpus_split.h"

#include <algorithm>
#include <map>

#include "core/common/error.h"
#include "core/data/splitmix64.h"

namespace moxlab {

namespace {

std::int64_t bytes_of(const std::vector<Document>& docs) {
  std::int64_t n = 0;
  for (const auto& d : docs) n += static_cast<std::int64_t>(d.text.size());
  return n;
}

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Nearest occurrence of `sep` to `at` whose cut point (just after sep) lies in (0, size).
std::size_t nearest_break(const std::string& text, std::size_t at, const std::string& sep) {
  std::size_t best = std::string::npos, best_dist = std::string::npos;
  auto consider = [&](std::size_t found) {
    if (found == std::string::npos) return;
    std::size_t cut = found + sep.size();
    if (cut == 0 || cut >= text.size()) return;
    std::size_t dist = cut > at ? cut - at : at - cut;
    if (dist < best_dist) best = cut, best_dist = dist;
  };
  consider(text.rfind(sep, at));
  consider(text.find(sep, at));
  return best;
}

std::uint64_t domain_seed(std::uint64_t seed, const std::string& domain) {
  SplitMix64 mix(seed ^ fnv1a64(domain));
  return mix.next();
}

DomainSplit split_domain(const std::string& domain, std::vector<Document> docs, const SplitOptions& o) {
  // Canonical order first, so the split does not depend on how the caller ordered its input.
  std::sort(docs.begin(), docs.end(), [](const Document& a, const Document& b) {
    return a.source != b.source ? a.source < b.source : a.text < b.text;
  });
  deterministic_shuffle(docs, domain_seed(o.seed, domain));
  const std::int64_t total = bytes_of(docs);
  require(total >= 2, "domain " + domain + " is too small to split into train and val (" + std::to_string(total) +
                          " bytes)");
  const auto by_fraction = static_cast<std::int64_t>(o.val_fraction * static_cast<double>(total));
  const std::int64_t target = std::max<std::int64_t>({1, by_fraction, std::min(o.min_val_bytes, total / 4)});
  const std::int64_t max_val = std::max(target, total / 2);

  DomainSplit out;
  out.domain = domain;
  std::int64_t val_bytes = 0;
  std::vector<bool> to_val(docs.size(), false);
  std::size_t n_val = 0;
  for (std::size_t i = 0; i < docs.size() && val_bytes < target && n_val + 1 < docs.size(); ++i) {
    auto size = static_cast<std::int64_t>(docs[i].text.size());
    if (val_bytes + size > max_val) continue;
    to_val[i] = true;
    val_bytes += size;
    ++n_val;
  }
  if (n_val == 0) {
    // No whole document fits: cut the first (shuffled) document that can be cut, tail to val.
    std::size_t pick = 0;
    while (pick < docs.size() && docs[pick].text.size() < 2) ++pick;
    require(pick < docs.size(), "domain " + domain + " has no document long enough to split off a val part");
    Document& d = docs[pick];
    const auto want = static_cast<std::size_t>(std::min<std::int64_t>(target, static_cast<std::int64_t>(d.text.size()) / 2));
    std::size_t cut = find_text_cut(d.text, d.text.size() - std::max<std::size_t>(1, want));
    out.val.push_back({d.domain, d.source + "#val", d.text.substr(cut)});
    d.text.resize(cut);
    d.source += "#train";
  }
  for (std::size_t i = 0; i < docs.size(); ++i) (to_val[i] ? out.val : out.train).push_back(std::move(docs[i]));
  return out;
}

}  // namespace

std::int64_t DomainSplit::train_bytes() const { return bytes_of(train); }
std::int64_t DomainSplit::val_bytes() const { return bytes_of(val); }

const DomainSplit* CorpusSplit::find(const std::string& domain) const {
  for (const auto& d : domains)
    if (d.domain == domain) return &d;
  return nullptr;
}

std::size_t find_text_cut(const std::string& text, std::size_t at) {
  if (text.size() < 2) return text.size();
  at = std::min(std::max<std::size_t>(at, 1), text.size() - 1);
  for (const char* sep : {"\n\n", "\n", " "}) {
    std::size_t cut = nearest_break(text, at, sep);
    if (cut != std::string::npos) return cut;
  }
  std::size_t cut = at;
  while (cut > 1 && is_continuation_byte(text[cut])) --cut;
  return cut;
}

CorpusSplit split_corpus(std::vector<Document> docs, const SplitOptions& options) {
  require(options.val_fraction > 0.0 && options.val_fraction < 1.0,
          "val_fraction must be in (0, 1), got " + std::to_string(options.val_fraction));
  require(!docs.empty(), "cannot split an empty corpus");
  std::map<std::string, std::vector<Document>> by_domain;
  for (auto& d : docs) {
    require_domain_label(d.domain);
    by_domain[d.domain].push_back(std::move(d));
  }
  CorpusSplit out;
  out.options = options;
  for (auto& [domain, list] : by_domain) out.domains.push_back(split_domain(domain, std::move(list), options));
  return out;
}

std::vector<std::string> train_texts(const CorpusSplit& split, std::int64_t max_bytes) {
  std::vector<std::string> out;
  if (max_bytes <= 0) {
    for (const auto& d : split.domains)
      for (const auto& doc : d.train) out.push_back(doc.text);
    return out;
  }
  std::int64_t remaining = max_bytes;
  std::vector<std::size_t> cursor(split.domains.size(), 0);
  for (bool any = true; any && remaining > 0;) {
    any = false;
    for (std::size_t k = 0; k < split.domains.size() && remaining > 0; ++k) {
      const auto& train = split.domains[k].train;
      if (cursor[k] >= train.size()) continue;
      any = true;
      const std::string& text = train[cursor[k]++].text;
      if (static_cast<std::int64_t>(text.size()) <= remaining) {
        out.push_back(text);
        remaining -= static_cast<std::int64_t>(text.size());
      } else {
        std::size_t cut = text.rfind('\n', static_cast<std::size_t>(remaining));
        if (cut == std::string::npos) cut = static_cast<std::size_t>(remaining);
        while (cut > 0 && cut < text.size() && is_continuation_byte(text[cut])) --cut;
        if (cut > 0) out.push_back(text.substr(0, cut));
        remaining = 0;
      }
    }
  }
  return out;
}

}  // namespace moxlab
