// Ranked BPE merge table: the encoding half shared by ByteLevelBpe and Gpt2Bpe.
// A merge turns the adjacent pair (left, right) into `result`; a lower rank merges earlier.
// apply() follows GPT-2's reference procedure exactly: take the lowest-ranked pair present in the
// word, merge all its occurrences left to right, repeat. It runs in O(n log n) on a heap (so a
// 100 kB run of one letter is no problem), processing one rank per round so the result equals the
// quadratic reference loop even for merge lists whose later ranks are not built from earlier ones.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace moxlab {

class BpeMergeTable {
 public:
  // Appends a merge with the next rank. Returns false (and adds nothing) if the pair already has one.
  bool add(std::int32_t left, std::int32_t right, std::int32_t result);
  std::size_t size() const { return pairs_.size(); }

  // Merges the symbols of one pre-tokenized chunk in place.
  void apply(std::vector<std::int32_t>& symbols) const;

  // Pre-tokenizes text with the GPT-2 pattern, maps each byte through byte_ids, applies the merges
  // chunk by chunk and appends the ids to out. Repeated chunks are served from a per-call cache,
  // which keeps the method const and thread-safe without locks.
  void encode(std::string_view text, const std::array<std::int32_t, 256>& byte_ids,
              std::vector<std::int32_t>& out) const;

 private:
  struct Merge {
    std::int32_t rank;
    std::int32_t result;
  };
  static std::uint64_t key(std::int32_t l, std::int32_t r) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l)) << 32) | static_cast<std::uint32_t>(r);
  }
  const Merge* find(std::int32_t l, std::int32_t r) const {
    auto it = pairs_.find(key(l, r));
    return it == pairs_.end() ? nullptr : &it->second;
  }
  std::unordered_map<std::uint64_t, Merge> pairs_;
};

}  // namespace moxlab
