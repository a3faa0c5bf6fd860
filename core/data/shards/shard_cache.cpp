#include "core/data/shards/shard_cache.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/shards/token_shards.h"

namespace moxlab {

std::string shard_cache_key(const CorpusSpec& spec, const CorpusSplit& split, const Tokenizer& tok) {
  nlohmann::json j;
  j["format_version"] = kTokenShardsVersion;
  j["spec"] = nlohmann::json::parse(corpus_spec_json(spec));
  j["corpus"] = corpus_split_digest(split);
  j["split"] = {{"seed", split.options.seed},
                {"val_fraction", split.options.val_fraction},
                {"min_val_bytes", split.options.min_val_bytes}};
  j["tokenizer"] = {{"kind", tok.kind()},
                    {"identity", tok.identity()},
                    {"vocab_size", tok.vocab_size()},
                    {"separator", tok.document_separator()}};
  return sha256_hex(j.dump());
}

std::string build_or_open_shards(const CorpusSpec& spec, const Tokenizer& tok, const std::string& cache_root,
                                 const ShardWriteOptions& options) {
  return build_or_open_shards(spec, build_split_corpus(spec), tok, cache_root, options);
}

std::string build_or_open_shards(const CorpusSpec& spec, const CorpusSplit& split, const Tokenizer& tok,
                                 const std::string& cache_root, const ShardWriteOptions& options) {
  const std::string dir = cache_root + "/shards-" + shard_cache_key(spec, split, tok).substr(0, 24);
  if (file_exists(dir)) {
    try {
      auto shards = TokenShards::open(dir);
      if (shards.tokenizer_kind() == tok.kind() && shards.tokenizer_identity() == tok.identity()) return dir;
    } catch (const Error&) {
      // Damaged after publication (a published folder is always complete): rebuild it below.
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    require(!ec, "cannot remove damaged token shards " + dir + ": " + ec.message());
  }
  make_dirs(cache_root);
  write_token_shards(split, tok, dir, options);
  return dir;
}

}  // namespace moxlab
