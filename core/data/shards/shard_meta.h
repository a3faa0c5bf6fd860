// The data digest of a token-shard folder: SHA-256 of meta.json's canonical dump (sorted keys, no
// whitespace) with the "digest" field left out. Shared by the shard writer and the reader.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace moxlab {

std::string shard_meta_digest(nlohmann::json meta);

}  // namespace moxlab
