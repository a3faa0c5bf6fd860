#include "core/io/safetensors.h"

#include <cstdint>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"

namespace moxlab {

namespace {

// The format is little-endian; moxlab only targets little-endian hosts, where the bytes can be copied
// straight into tensors. Checked once here rather than silently producing garbage elsewhere.
bool host_is_little_endian() {
  const std::uint16_t one = 1;
  std::uint8_t first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

struct DtypeInfo {
  torch::ScalarType type;
  std::size_t bytes;
};

bool dtype_info(const std::string& name, DtypeInfo& out) {
  if (name == "F32") out = {torch::kFloat32, 4};
  else if (name == "F16") out = {torch::kFloat16, 2};
  else if (name == "BF16") out = {torch::kBFloat16, 2};
  else return false;
  return true;
}

}  // namespace

void write_safetensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  require(host_is_little_endian(), "safetensors: big-endian hosts are not supported (" + path + ")");
  std::map<std::string, torch::Tensor> data;
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    require(name != "__metadata__", "safetensors: tensor name __metadata__ is reserved (" + path + ")");
    auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    const std::uint64_t bytes = static_cast<std::uint64_t>(c.numel()) * 4;
    header[name] = {{"dtype", "F32"}, {"shape", c.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data[name] = c;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  write_file_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    require(static_cast<bool>(out), "cannot write safetensors file " + path);
    std::uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>((json.size() >> (8 * i)) & 0xff);
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(json.data(), static_cast<std::streamsize>(json.size()));
    // std::map iterates in the same (sorted) order the offsets were assigned in.
    for (const auto& [name, c] : data)
      out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.numel() * 4));
    require(static_cast<bool>(out), "cannot write safetensors file " + path);
  });
}

SafeTensors read_safetensors(const std::string& path) {
  require(host_is_little_endian(), "safetensors: big-endian hosts are not supported (" + path + ")");
  const std::string file = read_file(path);
  const std::string bad = "safetensors file " + path + " ";
  require(file.size() >= 8, bad + "is truncated (no header length)");
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(file[i])) << (8 * i);
  require(n <= file.size() - 8, bad + "is truncated (header of " + std::to_string(n) + " bytes, file has " +
                                    std::to_string(file.size()) + ")");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const nlohmann::json::exception&) {
    throw Error(bad + "has a malformed JSON header");
  }
  require(header.is_object(), bad + "has a header that is not a JSON object");
  const std::uint64_t data_start = 8 + n, data_size = file.size() - data_start;

  SafeTensors st;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      require(entry.is_object(), bad + "has a malformed __metadata__");
      for (const auto& [k, v] : entry.items()) {
        require(v.is_string(), bad + "has a non-string __metadata__ value for " + k);
        st.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string what = bad + "has a malformed entry for tensor " + name;
    require(entry.is_object() && entry.contains("dtype") && entry.contains("shape") && entry.contains("data_offsets"), what);
    const auto& dt = entry["dtype"];
    const auto& shape_j = entry["shape"];
    const auto& off = entry["data_offsets"];
    require(dt.is_string() && shape_j.is_array() && off.is_array() && off.size() == 2 &&
                off[0].is_number_unsigned() && off[1].is_number_unsigned(), what);
    DtypeInfo info{torch::kFloat32, 0};
    require(dtype_info(dt.get<std::string>(), info),
            bad + "holds tensor " + name + " in unsupported dtype " + dt.get<std::string>() + " (F32, F16, BF16 only)");
    std::vector<std::int64_t> shape;
    std::uint64_t numel = 1;
    for (const auto& s : shape_j) {
      require(s.is_number_unsigned(), what);
      shape.push_back(s.get<std::int64_t>());
      numel *= s.get<std::uint64_t>();
    }
    const std::uint64_t begin = off[0].get<std::uint64_t>(), end = off[1].get<std::uint64_t>();
    require(begin <= end && end <= data_size, bad + "is truncated (tensor " + name + " ends at byte " +
                                                  std::to_string(end) + " of " + std::to_string(data_size) + ")");
    require(end - begin == numel * info.bytes, bad + "has tensor " + name + " whose byte range does not match its shape");
    auto raw = torch::empty(shape, info.type);
    if (numel > 0) std::memcpy(raw.data_ptr(), file.data() + data_start + begin, end - begin);
    st.tensors[name] = raw.to(torch::kFloat32).contiguous();
  }
  return st;
}

}  // namespace moxlab
