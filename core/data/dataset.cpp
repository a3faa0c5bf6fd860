#include "core/data/dataset.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/common/sha256.h"
#include "core/data/bpe_trainer.h"
#include "core/data/corpus_spec.h"
#include "core/data/corpus_split.h"
#include "core/data/package_corpus.h"
#include "core/data/shard_writer.h"
#include "core/data/tokenizer.h"
#include "core/data/user_corpus.h"

namespace moxlab {

namespace {

CorpusSplit build_split(const DataOptions& o, const std::function<void(const std::string&)>& log) {
  std::vector<Document> docs;
  if (o.corpus == "default") {
    PackageCorpusOptions p;
    p.domain_cap_bytes = o.domain_cap_bytes;
    docs = build_package_corpus(p);
  }
  UserCorpusOptions uo;
  uo.jsonl_field = o.jsonl_field;
  for (const auto& e : o.extra) {
    auto more = read_user_corpus(parse_user_corpus(e), uo);
    docs.insert(docs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  SplitOptions so;
  so.val_fraction = o.val_fraction;
  so.seed = static_cast<std::uint64_t>(o.split_seed);
  CorpusSplit split = split_corpus(std::move(docs), so);
  if (log) log("corpus: " + std::to_string(split.domains.size()) + " domains");
  return split;
}

std::string absolute_spec(const std::string& spec) {
  auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  return spec.substr(0, colon + 1) + std::filesystem::absolute(spec.substr(colon + 1)).string();
}

}  // namespace

PreparedData prepare_data(const DataOptions& o, const std::function<void(const std::string&)>& log) {
  make_dirs(o.cache_dir);
  const std::string cache = std::filesystem::absolute(o.cache_dir).string();
  // The key hashes every document of the split (about a second to rebuild), so an updated package
  // or edited user file is never served from a stale cache.
  const CorpusSplit split = build_split(o, log);
  const std::string ckey = corpus_split_digest(split);

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
    out.tokenizer_spec = absolute_spec(o.tokenizer);
  }
  auto tok = load_tokenizer(out.tokenizer_spec);

  const std::string skey = sha256_hex(ckey + "|" + tok->kind() + "|" + tok->identity());
  out.shards_dir = cache + "/shards-" + skey.substr(0, 16);
  if (!file_exists(out.shards_dir + "/meta.json")) {
    if (log) log("tokenizing corpus into " + out.shards_dir + " ...");
    write_token_shards(split, *tok, out.shards_dir);
  }
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
