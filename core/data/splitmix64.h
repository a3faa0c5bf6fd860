// SplitMix64 (Steele, Lea & Flood 2014): a tiny PRNG with a fully specified output sequence.
// Data splits use it instead of std::shuffle/std::uniform_int_distribution, whose results are
// implementation-defined and differ between standard libraries, so a split is the same everywhere.
#pragma once
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace moxlab {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) for bound > 0. The modulo bias is below 2^-40 for any realistic bound
  // (documents per domain), far under anything a data split can notice.
  std::uint64_t below(std::uint64_t bound) { return next() % bound; }

 private:
  std::uint64_t state_;
};

// Fisher-Yates shuffle driven by SplitMix64: identical on every platform for the same seed.
template <typename T>
void deterministic_shuffle(std::vector<T>& v, std::uint64_t seed) {
  SplitMix64 rng(seed);
  for (std::size_t i = v.size(); i > 1; --i) {
    std::size_t j = static_cast<std::size_t>(rng.below(i));
    std::swap(v[i - 1], v[j]);
  }
}

// FNV-1a 64-bit hash: a stable (platform-independent) hash for deriving sub-seeds from names.
inline std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

}  // namespace moxlab
