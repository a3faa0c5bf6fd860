#include "core/data/shards/dataset.h"

#include <filesystem>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/file_lock.h"
#include "core/common/sha256.h"
#include "core/data/tokenizers/bpe_trainer.h"
#include "core/data/corpora/corpus_spec.h"
#include "core/data/corpora/corpus_split.h"
#include "core/data/shards/shard_cache.h"
#include "core/data/tokenizers/tokenizer.h"

namespace moxlab {

PreparedData prepare_data(const DataOptions& o, const std::function<void(const std::string&)>& log) {
  make_dirs(o.cache_dir);
  const std::string cache = std::filesystem::absolute(o.cache_dir).string();
  // Sweep workers and array tasks start together: one builds the tokenizer and shards, the rest wait
  // for it and then open what it built.
  FileLock lock(cache + "/.build.lock");
  // Cache keys hash every document of the split (about a second to rebuild), so an updated
  // package or edited user file is never served from a stale cache.
  const CorpusSpec spec = corpus_spec_from_options(o);
  const CorpusSplit split = build_split_corpus(spec);
  if (log) log("corpus: " + std::to_string(split.domains.size()) + " domains");
  const std::string ckey = sha256_hex(corpus_spec_json(spec) + "|" + corpus_split_digest(split));

  PreparedData out;
  if (o.tokenizer == "bpe") {
    const std::string key = sha256_hex(ckey + "|bpe|" + std::to_string(o.bpe_vocab_size) + "|" + std::to_string(o.bpe_train_bytes));
    const std::string path = cache + "/bpe-" + key.substr(0, 16) + ".json";
    if (!file_exists(path)) {
      if (log) log("training byte-level BPE (vocab " + std::to_string(o.bpe_vocab_size) + ") on the train split ...");
      ByteLevelBpe bpe = train_byte_level_bpe(train_texts(split, o.bpe_train_bytes), o.bpe_vocab_size);
      bpe.save(path);
    }
    out.tokenizer_spec = "bpe:" + path;
  } else {
    out.tokenizer_spec = absolute_tokenizer_spec(o.tokenizer);
  }
  auto tok = load_tokenizer(out.tokenizer_spec);

  out.shards_dir = build_or_open_shards(spec, split, *tok, cache);
  out.digest = TokenShards::open(out.shards_dir).digest();
  return out;
}

ShardTokenSource::ShardTokenSource(const std::string& dir, Split split)
    : shards_(std::make_shared<TokenShards>(TokenShards::open(dir))), split_(split) {}

int ShardTokenSource::num_domains() const { return static_cast<int>(shards_->domains().size()); }

std::string ShardTokenSource::domain_name(int d) const { return shards_->domains()[d].name; }

std::int64_t ShardTokenSource::size(int d) const { return shards_->tokens(domain_name(d), split_).size(); }

void ShardTokenSource::read(int d, std::int64_t start, std::int64_t len, std::int32_t* out) const {
  shards_->tokens(domain_name(d), split_).window_into(start, len, out);
}

std::int64_t ShardTokenSource::text_bytes(int d) const {
  const auto& info = shards_->domains()[d];
  return split_ == Split::Train ? info.train_bytes : info.val_bytes;
}

}  // namespace moxlab
