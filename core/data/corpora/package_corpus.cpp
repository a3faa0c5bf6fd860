#include "core/data/corpora/package_corpus.h"

#include <algorithm>
#include <thread>

#include "core/common/error.h"
#include "core/common/paths.h"
#include "core/data/corpora/package_sources.h"
#include "core/data/splitmix64.h"

namespace moxlab {

std::vector<std::string> default_package_domains() {
  return {"books", "speeches", "legal", "code", "docs", "news", "fiction", "learned", "dictionary"};
}

std::string package_npm_dir(const PackageCorpusOptions& options) {
  return options.npm_dir.empty() ? source_dir() + "/data/npm/node_modules" : options.npm_dir;
}

namespace {

std::vector<std::string> requested_domains(const PackageCorpusOptions& options) {
  auto domains = options.domains.empty() ? default_package_domains() : options.domains;
  std::sort(domains.begin(), domains.end());
  domains.erase(std::unique(domains.begin(), domains.end()), domains.end());
  return domains;
}

// Cuts text to at most cap bytes at the last newline (or, failing that, a UTF-8 boundary).
std::string truncate_at_line(const std::string& text, std::size_t cap) {
  if (text.size() <= cap) return text;
  std::size_t cut = text.rfind('\n', cap > 0 ? cap - 1 : 0);
  if (cut == std::string::npos || cut == 0) {
    cut = cap;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return text.substr(0, cut);
  }
  return text.substr(0, cut + 1);
}

}  // namespace

std::vector<std::string> missing_corpus_packages(const PackageCorpusOptions& options) {
  const std::string npm_dir = package_npm_dir(options);
  std::vector<std::string> missing;
  std::vector<std::string> seen;
  for (const auto& domain : requested_domains(options)) {
    for (const auto& stream : package_streams(domain, npm_dir)) {
      for (const auto& r : stream.requirements) {
        if (requirement_met(r) || std::find(seen.begin(), seen.end(), r.package) != seen.end()) continue;
        seen.push_back(r.package);
        missing.push_back(r.package + " (needed by domain " + domain + ", missing " + r.probe +
                          "; install: " + r.install + ")");
      }
    }
  }
  return missing;
}

std::vector<Document> cap_domain_documents(std::vector<std::vector<Document>> streams, std::int64_t cap_bytes) {
  for (auto& s : streams) {
    // A fixed hash of the name spreads the kept sample over the whole source (all of the Bible,
    // every decade of speeches) instead of keeping only its first documents.
    std::sort(s.begin(), s.end(), [](const Document& a, const Document& b) {
      auto ha = fnv1a64(a.source), hb = fnv1a64(b.source);
      return ha != hb ? ha < hb : a.source < b.source;
    });
  }
  std::vector<Document> kept;
  std::int64_t total = 0;
  std::vector<std::size_t> cursor(streams.size(), 0);
  for (bool any = true; any;) {
    any = false;
    for (std::size_t k = 0; k < streams.size(); ++k) {
      if (cursor[k] >= streams[k].size()) continue;
      any = true;
      Document& d = streams[k][cursor[k]++];
      auto size = static_cast<std::int64_t>(d.text.size());
      if (d.text.empty()) continue;
      if (cap_bytes > 0 && total + size > cap_bytes) continue;
      total += size;
      kept.push_back(std::move(d));
    }
  }
  if (kept.empty() && cap_bytes > 0) {
    for (auto& s : streams) {
      for (auto& d : s) {
        if (d.text.empty()) continue;
        d.text = truncate_at_line(d.text, static_cast<std::size_t>(cap_bytes));
        if (!d.text.empty()) kept.push_back(std::move(d));
        break;
      }
      if (!kept.empty()) break;
    }
  }
  std::sort(kept.begin(), kept.end(), [](const Document& a, const Document& b) { return a.source < b.source; });
  return kept;
}

std::vector<Document> build_package_corpus(const PackageCorpusOptions& options) {
  auto missing = missing_corpus_packages(options);
  if (!missing.empty()) {
    std::string msg = "the default corpus needs packages that are not installed:";
    for (const auto& m : missing) msg += " " + m + ";";
    throw Error(msg);
  }
  const std::string npm_dir = package_npm_dir(options);
  const auto domains = requested_domains(options);
  // Domains are independent, so they are read on two threads (the machine has two cores); each
  // result lands in its own slot, so the output does not depend on scheduling.
  std::vector<std::vector<Document>> per_domain(domains.size());
  std::vector<std::string> errors(domains.size());
  auto build_one = [&](std::size_t i) {
    try {
      std::vector<std::vector<Document>> streams;
      for (const auto& stream : package_streams(domains[i], npm_dir)) streams.push_back(stream.read());
      per_domain[i] = cap_domain_documents(std::move(streams), options.domain_cap_bytes);
      for (auto& d : per_domain[i]) d.domain = domains[i];
    } catch (const std::exception& e) {
      errors[i] = "default corpus domain " + domains[i] + ": " + e.what();
    }
  };
  const std::size_t n_threads = std::min<std::size_t>(2, domains.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < n_threads; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = t; i < domains.size(); i += n_threads) build_one(i);
    });
  for (auto& th : threads) th.join();
  for (const auto& e : errors)
    if (!e.empty()) throw Error(e);
  std::vector<Document> out;
  for (auto& docs : per_domain)
    for (auto& d : docs) out.push_back(std::move(d));
  return out;
}

}  // namespace moxlab
