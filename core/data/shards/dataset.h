// From DataOptions to ready-to-train data: the corpus (package-shipped default + user extras), its
// per-domain train/val split, the tokenizer (moxlab's BPE trained on the train split only, or a
// given vocabulary) and the token shards — all cached under data.cache_dir by content keys, so a
// second run with the same data options reuses them and a changed option never reuses stale ones.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "core/data/data_options.h"
#include "core/data/shards/token_shards.h"
#include "core/data/shards/token_source.h"

namespace moxlab {

struct PreparedData {
  std::string tokenizer_spec;  // for load_tokenizer(); absolute path
  std::string shards_dir;
  std::string digest;          // the run's data digest (token_shards.h)
};

PreparedData prepare_data(const DataOptions& options, const std::function<void(const std::string&)>& log = {});

// One split of a shard folder as a TokenSource (domains in the folder's order).
class ShardTokenSource : public TokenSource {
 public:
  ShardTokenSource(const std::string& dir, Split split);
  int num_domains() const override;
  std::string domain_name(int d) const override;
  std::int64_t size(int d) const override;
  void read(int d, std::int64_t start, std::int64_t len, std::int32_t* out) const override;
  std::int64_t text_bytes(int d) const override;

 private:
  std::shared_ptr<TokenShards> shards_;
  Split split_;
};

}  // namespace moxlab
