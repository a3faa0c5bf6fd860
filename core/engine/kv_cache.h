// Keys and values of the positions a decoder has already processed, per attention module, so a sequence
// can run in pieces (a prompt, then one token at a time) with the result of running it whole: the new
// queries and keys are rotated at their true positions and attend to the cached keys and values.
// Used by generate() and `bench infer`'s decode step.
//
// Each entry keeps its positions at the front of buffers with room to spare, doubled when full, so a
// step writes only its new positions: growing by concatenation would copy the whole cache on every step,
// quadratic in the generated length (docs/decisions/2026-11-25-kv-cache.md).
#pragma once
#include <map>
#include <utility>

#include <torch/torch.h>

namespace moxlab {

struct KvCache {
  struct Entry {
    torch::Tensor k, v;  // [B, T_past, Hkv, hd]: the cached positions (views of the buffers' first T_past)
                         // k after RoPE (and a static q/k mask, if any)
    torch::Tensor k_room, v_room;  // [B, capacity, Hkv, hd]: the buffers behind k and v
    std::int64_t length() const { return k.defined() ? k.size(1) : 0; }
  };
  // The entry of one attention module, keyed by the module's address.
  Entry& at(const void* owner) { return entries_[owner]; }
  // Positions cached so far (every entry holds the same number).
  std::int64_t length() const { return entries_.empty() ? 0 : entries_.begin()->second.length(); }
  // Keeps the first n positions (a benchmark replays one decode step); the next append overwrites the rest.
  void truncate(std::int64_t n);
  void clear() { entries_.clear(); }

 private:
  std::map<const void*, Entry> entries_;
};

// Appends k, v [B, T, Hkv, hd] to the owner's entry and returns all keys and values so far, as views of the
// entry's buffers: valid until the entry's next append or truncate, which may write over or move them.
std::pair<torch::Tensor, torch::Tensor> append_kv(KvCache::Entry& e, const torch::Tensor& k, const torch::Tensor& v);

}  // namespace moxlab
