#include "core/data/tokenizers/byte_bpe_codec.h"

#include "core/common/error.h"

namespace moxlab {

std::vector<std::int32_t> ByteBpeCodec::encode(std::string_view text) const {
  std::vector<std::int32_t> out;
  out.reserve(text.size() / 3);
  table_.encode(text, byte_ids_, out);
  return out;
}

std::string ByteBpeCodec::token_bytes(std::int32_t id, std::int32_t /*prev*/) const {
  require(id >= 0 && id < vocab_size(),
          "token id " + std::to_string(id) + " out of range for " + vocabulary_ + " of " + std::to_string(vocab_size()));
  return bytes_[id];
}

std::string ByteBpeCodec::decode(const std::vector<std::int32_t>& ids) const {
  std::string s;
  for (std::int32_t id : ids) s += token_bytes(id, -1);
  return s;
}

}  // namespace moxlab
