// The safetensors format (huggingface/safetensors), read and checked without LibTorch: an 8-byte
// little-endian header length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin,
// end]}, "__metadata__": {string: string}}, then the data buffer, offsets relative to its start.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/float_encoding.h"

namespace moxlab {

struct SafetensorsEntry {
  std::string name;
  FloatEncoding dtype = FloatEncoding::f32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0, end = 0;  // byte range in the data buffer
};

struct SafetensorsLayout {
  std::uint64_t data_start = 0;            // file offset of the data buffer (8 + N)
  std::vector<SafetensorsEntry> tensors;   // in data order
  std::map<std::string, std::string> metadata;
  std::string_view bytes_of(std::string_view file, const SafetensorsEntry& e) const {
    return file.substr(data_start + e.begin, e.end - e.begin);
  }
};

// The largest header the reference library accepts.
constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

// Checks a whole safetensors file held in memory, as the reference library does and more: the header
// length within the file and its limit, a JSON object with unique names, each entry's dtype (F32, F16 or
// BF16: what moxlab reads), shape and offsets consistent (overflow-checked), the tensors tiling the data
// buffer exactly (no gap, no overlap, no byte after the last: inserted or duplicated bytes would shift
// every later tensor), and every value finite. Throws Error naming the file and, where one is at fault,
// the tensor.
SafetensorsLayout parse_safetensors(std::string_view file, const std::string& path);

}  // namespace moxlab
