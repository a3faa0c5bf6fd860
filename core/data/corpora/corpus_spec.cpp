#include "core/data/corpora/corpus_spec.h"

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/common/sha256.h"

namespace moxlab {

CorpusSpec corpus_spec_from_options(const DataOptions& o) {
  CorpusSpec spec;
  require(o.corpus == "default" || o.corpus == "none",
          "data.corpus must be \"default\" or \"none\", got \"" + o.corpus + "\"");
  spec.use_package_corpus = o.corpus == "default";
  spec.package.domain_cap_bytes = o.domain_cap_bytes;
  for (const auto& e : o.extra) spec.user.push_back(parse_user_corpus(e));
  require(spec.use_package_corpus || !spec.user.empty(),
          "data.corpus = \"none\" needs at least one data.extra corpus (DOMAIN=PATH)");
  spec.user_options.jsonl_field = o.jsonl_field;
  spec.split.val_fraction = o.val_fraction;
  spec.split.seed = static_cast<std::uint64_t>(o.split_seed);
  return spec;
}

std::string corpus_spec_json(const CorpusSpec& spec) {
  nlohmann::json j;
  j["package_corpus"] = spec.use_package_corpus;
  if (spec.use_package_corpus) {
    j["package_domains"] = spec.package.domains.empty() ? default_package_domains() : spec.package.domains;
    j["domain_cap_bytes"] = spec.package.domain_cap_bytes;
  }
  nlohmann::json user = nlohmann::json::array();
  for (const auto& u : spec.user) user.push_back({{"domain", u.domain}, {"path", u.path}});
  j["user"] = user;
  j["jsonl_field"] = spec.user_options.jsonl_field;
  j["txt_chunk_bytes"] = spec.user_options.txt_chunk_bytes;
  j["seed"] = spec.split.seed;
  j["val_fraction"] = spec.split.val_fraction;
  j["min_val_bytes"] = spec.split.min_val_bytes;
  return j.dump();
}

std::vector<Document> build_corpus(const CorpusSpec& spec) {
  std::vector<Document> docs;
  if (spec.use_package_corpus) docs = build_package_corpus(spec.package);
  for (const auto& u : spec.user) {
    auto part = read_user_corpus(u, spec.user_options);
    require(!part.empty(), "user corpus " + u.domain + "=" + u.path + " has no documents");
    for (auto& d : part) docs.push_back(std::move(d));
  }
  require(!docs.empty(), "the corpus is empty");
  return docs;
}

CorpusSplit build_split_corpus(const CorpusSpec& spec) { return split_corpus(build_corpus(spec), spec.split); }

std::string corpus_split_digest(const CorpusSplit& split) {
  Sha256 h;
  // Lengths are hashed before contents so that no two different corpora share a byte stream.
  auto field = [&](const std::string& s) {
    std::string len = std::to_string(s.size()) + ":";
    h.update(len);
    h.update(s);
  };
  for (const auto& d : split.domains) {
    field(d.domain);
    for (const auto* part : {&d.train, &d.val}) {
      field(part == &d.train ? "train" : "val");
      for (const auto& doc : *part) {
        field(doc.source);
        field(doc.text);
      }
    }
  }
  return h.hex_digest();
}

}  // namespace moxlab
