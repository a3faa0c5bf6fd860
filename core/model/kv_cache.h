// Keys and values of the positions a decoder has already processed, per attention module, so a sequence
// can run in pieces (a prompt, then one token at a time) with the result of running it whole: the new
// queries and keys are rotated at their true positions and attend to the cached keys and values.
// Used by generate() and `bench infer`'s decode step. The cache grows by concatenation (a copy per step,
// linear in the cached length: fine at this toolkit's sizes).
#pragma once
#include <map>

#include <torch/torch.h>

namespace moxlab {

struct KvCache {
  struct Entry {
    torch::Tensor k, v;  // [B, T_past, Hkv, hd]; k after RoPE (and a static q/k mask, if any)
  };
  // The entry of one attention module, keyed by the module's address.
  Entry& at(const void* owner) { return entries_[owner]; }
  // Positions cached so far (every entry holds the same number).
  std::int64_t length() const { return entries_.empty() ? 0 : entries_.begin()->second.k.size(1); }
  // Keeps the first n positions (a benchmark replays one decode step).
  void truncate(std::int64_t n) {
    for (auto& [owner, e] : entries_) {
      e.k = e.k.narrow(1, 0, n);
      e.v = e.v.narrow(1, 0, n);
    }
  }
  void clear() { entries_.clear(); }

 private:
  std::map<const void*, Entry> entries_;
};

// Appends k, v [B, T, Hkv, hd] to the owner's entry and returns all keys and values so far.
inline std::pair<torch::Tensor, torch::Tensor> append_kv(KvCache::Entry& e, const torch::Tensor& k, const torch::Tensor& v) {
  e.k = e.k.defined() ? torch::cat({e.k, k}, 1) : k;
  e.v = e.v.defined() ? torch::cat({e.v, v}, 1) : v;
  return {e.k, e.v};
}

}  // namespace moxlab
