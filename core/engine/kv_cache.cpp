#include "core/engine/kv_cache.h"

#include <algorithm>

#include "core/common/error.h"

namespace moxlab {

void KvCache::truncate(std::int64_t n) {
  for (auto& [owner, e] : entries_) {
    require(n >= 0 && n <= e.length(), "KV cache: cannot keep " + std::to_string(n) + " of " + std::to_string(e.length()) + " positions");
    e.k = e.k.narrow(1, 0, n);
    e.v = e.v.narrow(1, 0, n);
  }
}

namespace {

// `buffer` [B, capacity, ...] holding `used` positions, made to hold `need` with the shape and type of `like`:
// reallocated at twice the need (so appends of a few positions copy the cache O(log T) times in all) with
// the used positions copied over.
torch::Tensor with_room(const torch::Tensor& buffer, std::int64_t used, std::int64_t need, const torch::Tensor& like) {
  const bool fits = buffer.defined() && buffer.size(1) >= need && buffer.size(0) == like.size(0) &&
                    buffer.sizes().slice(2) == like.sizes().slice(2) && buffer.options().type_equal(like.options());
  if (fits) return buffer;
  auto sizes = like.sizes().vec();
  sizes[1] = std::max<std::int64_t>(2 * need, 16);
  auto grown = torch::empty(sizes, like.options());
  if (used > 0) grown.narrow(1, 0, used).copy_(buffer.narrow(1, 0, used));
  return grown;
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> append_kv(KvCache::Entry& e, const torch::Tensor& k, const torch::Tensor& v) {
  require(k.dim() == 4 && v.dim() == 4 && k.size(0) == v.size(0) && k.size(1) == v.size(1),
          "KV cache: keys and values must be [B, T, kv heads, head dim] with the same B and T");
  const std::int64_t n = e.length(), t = k.size(1);
  require(n == 0 || (k.size(0) == e.k.size(0) && k.sizes().slice(2) == e.k.sizes().slice(2) && v.sizes().slice(2) == e.v.sizes().slice(2)),
          "KV cache: new keys and values do not match the cached ones' batch and head shapes");
  e.k_room = with_room(e.k_room, n, n + t, k);
  e.v_room = with_room(e.v_room, n, n + t, v);
  e.k_room.narrow(1, n, t).copy_(k);
  e.v_room.narrow(1, n, t).copy_(v);
  e.k = e.k_room.narrow(1, 0, n + t);
  e.v = e.v_room.narrow(1, 0, n + t);
  return {e.k, e.v};
}

}  // namespace moxlab
