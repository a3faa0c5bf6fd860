// Deterministic mutants of a real file, for the mutation tests of every loader: the same seed gives
// the same mutants on every machine (SplitMix64), so a crash found in CI reproduces anywhere.
// The operators are those of the reliability audit that found the loaders' crashes and hangs:
// byte flips anywhere and in the structural head of the file, planted special integers (0, -1,
// 2^31-1, 2^63-1, ...) in that head, truncation, and insertion, deletion and duplication of chunks.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/data/splitmix64.h"

namespace moxlab::testing {

struct Mutant {
  std::string bytes;
  std::string how;  // e.g. "flip 3 bytes in head", for the failure message
};

// `head` is the size of the file's structural region (a header, an HDF5 superblock and object
// headers): half of the mutants aim there, where a changed byte reaches the parser rather than data.
inline std::vector<Mutant> make_mutants(const std::string& original, int count, std::uint64_t seed,
                                        std::size_t head = 4096) {
  SplitMix64 rng(seed);
  const std::size_t n = original.size();
  head = std::max<std::size_t>(1, std::min(head, n));
  auto below = [&](std::size_t bound) { return bound == 0 ? std::size_t{0} : static_cast<std::size_t>(rng.below(bound)); };
  static const std::uint64_t specials[] = {0,          1,          0xff,       0x7fffffffULL, 0x80000000ULL,
                                           0xffffffffULL, 0x7fffffffffffffffULL, 0xffffffffffffffffULL};
  std::vector<Mutant> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    Mutant m{original, ""};
    std::string& b = m.bytes;
    switch (rng.below(7)) {
      case 0: {  // random byte flips anywhere
        const std::size_t k = 1 + below(8);
        for (std::size_t j = 0; j < k && n > 0; ++j) b[below(n)] = static_cast<char>(rng.next());
        m.how = "flip " + std::to_string(k) + " bytes anywhere";
        break;
      }
      case 1: {  // flips in the structural head
        const std::size_t k = 1 + below(4);
        for (std::size_t j = 0; j < k; ++j) b[below(head)] = static_cast<char>(rng.next());
        m.how = "flip " + std::to_string(k) + " bytes in the head";
        break;
      }
      case 2: {  // a special 4- or 8-byte integer planted in the head
        const std::size_t width = rng.below(2) ? 8 : 4;
        if (n < width) break;
        const std::size_t at = below(std::min(head, n - width + 1));
        const std::uint64_t v = specials[rng.below(sizeof(specials) / sizeof(specials[0]))];
        std::memcpy(&b[at], &v, width);
        m.how = "plant " + std::to_string(v) + " (" + std::to_string(width) + " bytes) at " + std::to_string(at);
        break;
      }
      case 3: {  // truncation
        const std::size_t keep = below(n);
        b.resize(keep);
        m.how = "truncate to " + std::to_string(keep);
        break;
      }
      case 4: {  // insertion of random bytes
        const std::size_t at = below(n + 1), len = 1 + below(64);
        std::string chunk(len, '\0');
        for (auto& c : chunk) c = static_cast<char>(rng.next());
        b.insert(at, chunk);
        m.how = "insert " + std::to_string(len) + " bytes at " + std::to_string(at);
        break;
      }
      case 5: {  // deletion of a chunk
        const std::size_t at = below(n), len = 1 + below(64);
        b.erase(at, len);
        m.how = "delete " + std::to_string(len) + " bytes at " + std::to_string(at);
        break;
      }
      default: {  // duplication of a chunk in place
        const std::size_t at = below(n), len = 1 + below(64);
        b.insert(at, original.substr(at, len));
        m.how = "duplicate " + std::to_string(len) + " bytes at " + std::to_string(at);
        break;
      }
    }
    if (b == original) {  // a no-op mutation tests nothing: flip one byte instead
      if (n > 0) b[below(n)] ^= 0x5a;
      m.how += " (+1 flip)";
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace moxlab::testing
