#include "core/formats/float_encoding.h"

#include "core/common/error.h"

namespace moxlab {

namespace {

// Elements are little-endian; reading them byte by byte needs neither alignment nor a host byte order.
template <std::size_t Width, std::uint32_t ExponentMask>
NonFiniteCount scan(std::string_view bytes) {
  NonFiniteCount r;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::uint64_t n = bytes.size() / Width;
  for (std::uint64_t i = 0; i < n; ++i, p += Width) {
    std::uint32_t v = 0;
    for (std::size_t b = 0; b < Width; ++b) v |= static_cast<std::uint32_t>(p[b]) << (8 * b);
    if ((v & ExponentMask) == ExponentMask) {  // all exponent bits set: Inf or NaN
      if (r.count++ == 0) r.first = i;
    }
  }
  return r;
}

}  // namespace

NonFiniteCount count_nonfinite(std::string_view bytes, FloatEncoding e) {
  switch (e) {
    case FloatEncoding::f32: return scan<4, 0x7f800000u>(bytes);
    case FloatEncoding::f16: return scan<2, 0x7c00u>(bytes);
    case FloatEncoding::bf16: return scan<2, 0x7f80u>(bytes);
  }
  return {};
}

void require_finite(std::string_view bytes, FloatEncoding e, const std::string& what) {
  const NonFiniteCount c = count_nonfinite(bytes, e);
  if (c.count == 0) return;
  throw Error(what + " holds " + std::to_string(c.count) + " NaN/Inf value" + (c.count == 1 ? "" : "s") +
              " (first at element " + std::to_string(c.first) + " of " +
              std::to_string(bytes.size() / encoding_bytes(e)) + ")");
}

}  // namespace moxlab
