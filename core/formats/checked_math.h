// Size arithmetic on numbers read from untrusted files: 64-bit, and an overflow is an Error naming the
// file instead of a wrapped size that a later check would trust.
#pragma once
#include <cstdint>
#include <string>

#include "core/common/error.h"

namespace moxlab {

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(what + " (size overflows 64 bits)");
  return r;
}

inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Error(what + " (size overflows 64 bits)");
  return r;
}

}  // namespace moxlab
