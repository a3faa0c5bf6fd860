#include "core/formats/safetensors_format.h"

#include <algorithm>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/formats/checked_math.h"

namespace moxlab {

namespace {

bool encoding_of(const std::string& dtype, FloatEncoding& out) {
  if (dtype == "F32") out = FloatEncoding::f32;
  else if (dtype == "F16") out = FloatEncoding::f16;
  else if (dtype == "BF16") out = FloatEncoding::bf16;
  else return false;
  return true;
}

// The header JSON, refusing a name given twice (nlohmann would keep the last one silently).
nlohmann::json parse_header(std::string_view text, const std::string& bad) {
  std::set<std::string> names;
  std::string twice;
  auto unique_names = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key && parsed.is_string() &&
        !names.insert(parsed.get<std::string>()).second && twice.empty())
      twice = parsed.get<std::string>();
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text.begin(), text.end(), unique_names);
  } catch (const nlohmann::json::exception&) {
    throw Error(bad + "has a malformed JSON header");
  }
  require(twice.empty(), bad + "names tensor " + twice + " twice in its header");
  require(header.is_object(), bad + "has a header that is not a JSON object");
  return header;
}

SafetensorsEntry parse_entry(const std::string& name, const nlohmann::json& entry, const std::string& bad) {
  const std::string malformed = bad + "has a malformed entry for tensor " + name;
  require(entry.is_object() && entry.contains("dtype") && entry.contains("shape") && entry.contains("data_offsets"),
          malformed);
  const auto& dt = entry["dtype"];
  const auto& shape = entry["shape"];
  const auto& off = entry["data_offsets"];
  require(dt.is_string() && shape.is_array() && off.is_array() && off.size() == 2 && off[0].is_number_unsigned() &&
              off[1].is_number_unsigned(),
          malformed);
  SafetensorsEntry e;
  e.name = name;
  require(encoding_of(dt.get<std::string>(), e.dtype),
          bad + "holds tensor " + name + " in unsupported dtype " + dt.get<std::string>() + " (F32, F16, BF16 only)");
  // numel counts zeros; `extent` counts them as ones, so that it bounds every stride a tensor library computes.
  std::uint64_t numel = 1, extent = 1;
  const std::string too_big = bad + "has tensor " + name + " with an impossible shape";
  for (const auto& s : shape) {
    require(s.is_number_unsigned(), malformed);
    const std::uint64_t dim = s.get<std::uint64_t>();
    numel = checked_mul(numel, dim, too_big);
    extent = checked_mul(extent, std::max<std::uint64_t>(dim, 1), too_big);
    require(extent <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), too_big);
    e.shape.push_back(static_cast<std::int64_t>(dim));
  }
  e.begin = off[0].get<std::uint64_t>();
  e.end = off[1].get<std::uint64_t>();
  require(e.begin <= e.end, bad + "has tensor " + name + " whose data_offsets end before they begin");
  require(e.end - e.begin == checked_mul(numel, encoding_bytes(e.dtype), too_big),
          bad + "has tensor " + name + " whose byte range does not match its shape");
  return e;
}

}  // namespace

SafetensorsLayout parse_safetensors(std::string_view file, const std::string& path) {
  const std::string file_name = "safetensors file " + path, bad = file_name + " ";
  require(file.size() >= 8, bad + "is truncated (no header length)");
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(file[i])) << (8 * i);
  require(n <= file.size() - 8, bad + "is truncated (header of " + std::to_string(n) + " bytes, file has " +
                                    std::to_string(file.size()) + ")");
  require(n <= kMaxSafetensorsHeader, bad + "has a header of " + std::to_string(n) + " bytes (the format's limit is " +
                                          std::to_string(kMaxSafetensorsHeader) + ")");
  const nlohmann::json header = parse_header(file.substr(8, n), bad);

  SafetensorsLayout out;
  out.data_start = 8 + n;
  const std::uint64_t data_size = file.size() - out.data_start;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      require(entry.is_object(), bad + "has a malformed __metadata__");
      for (const auto& [k, v] : entry.items()) {
        require(v.is_string(), bad + "has a non-string __metadata__ value for " + k);
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    SafetensorsEntry e = parse_entry(name, entry, bad);
    require(e.end <= data_size, bad + "is truncated (tensor " + name + " ends at byte " + std::to_string(e.end) +
                                    " of " + std::to_string(data_size) + ")");
    out.tensors.push_back(std::move(e));
  }

  // The tensors must tile the data buffer, as the reference library requires.
  std::sort(out.tensors.begin(), out.tensors.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const auto& e : out.tensors) {
    require(e.begin >= covered, bad + "has tensor " + e.name + " overlapping tensor " + (previous ? previous->name : "") +
                                    " (data bytes " + std::to_string(e.begin) + ".." + std::to_string(covered) + ")");
    require(e.begin == covered, bad + "has " + std::to_string(e.begin - covered) + " bytes before tensor " + e.name +
                                    " that belong to no tensor (data bytes " + std::to_string(covered) + ".." +
                                    std::to_string(e.begin) + ")");
    covered = e.end;
    previous = &e;
  }
  require(covered == data_size, bad + "holds " + std::to_string(data_size - covered) +
                                    " more data bytes than its tensors cover (data of " + std::to_string(data_size) +
                                    " bytes, tensors cover " + std::to_string(covered) +
                                    "): bytes inserted, duplicated or appended");

  for (const auto& e : out.tensors) require_finite(out.bytes_of(file, e), e.dtype, file_name + ": tensor " + e.name);
  return out;
}

}  // namespace moxlab
