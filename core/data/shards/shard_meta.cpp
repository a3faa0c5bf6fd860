#include "core/data/shards/shard_meta.h"

#include "core/common/sha256.h"

namespace moxlab {

std::string shard_meta_digest(nlohmann::json meta) {
  meta.erase("digest");
  // nlohmann::json keeps object keys sorted, so dump() is canonical for equal content.
  return sha256_hex(meta.dump());
}

}  // namespace moxlab
