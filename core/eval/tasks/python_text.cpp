#include "core/eval/tasks/python_text.h"

namespace moxlab {

bool python_isspace(char32_t cp) {
  // The complete set for which CPython's str.isspace() is true (Unicode White_Space plus the
  // ASCII information separators U+001C..U+001F), checked against CPython 3.11.
  if (cp >= 0x09 && cp <= 0x0D) return true;
  if (cp >= 0x1C && cp <= 0x20) return true;
  if (cp == 0x85 || cp == 0xA0 || cp == 0x1680) return true;
  if (cp >= 0x2000 && cp <= 0x200A) return true;
  return cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

namespace {

bool is_continuation_byte(unsigned char b) { return (b & 0xC0) == 0x80; }

// Decodes the code point that ends at byte `end` (exclusive). Sets `start` to its first byte.
// Returns false when the bytes there are not one well-formed UTF-8 sequence.
bool decode_last(std::string_view text, std::size_t end, std::size_t& start, char32_t& cp) {
  std::size_t i = end;
  int trailing = 0;
  while (i > 0 && is_continuation_byte(static_cast<unsigned char>(text[i - 1])) && trailing < 3) {
    --i;
    ++trailing;
  }
  if (i == 0) return false;
  --i;
  const auto lead = static_cast<unsigned char>(text[i]);
  int expected = 0;
  char32_t value = 0;
  if (lead < 0x80) {
    expected = 0;
    value = lead;
  } else if ((lead & 0xE0) == 0xC0) {
    expected = 1;
    value = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    expected = 2;
    value = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    expected = 3;
    value = lead & 0x07;
  } else {
    return false;
  }
  if (expected != trailing) return false;
  for (std::size_t k = i + 1; k < end; ++k) value = (value << 6) | (static_cast<unsigned char>(text[k]) & 0x3F);
  start = i;
  cp = value;
  return true;
}

}  // namespace

std::size_t python_rstrip_size(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0) {
    std::size_t start = 0;
    char32_t cp = 0;
    if (!decode_last(text, end, start, cp) || !python_isspace(cp)) break;
    end = start;
  }
  return end;
}

std::size_t python_len(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += is_continuation_byte(static_cast<unsigned char>(c)) ? 0 : 1;
  return n;
}

}  // namespace moxlab
