#include "core/io/safetensors.h"

#include <cstdint>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/error.h"
#include "core/formats/safetensors_format.h"

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

torch::ScalarType torch_type(FloatEncoding e) {
  switch (e) {
    case FloatEncoding::f16: return torch::kFloat16;
    case FloatEncoding::bf16: return torch::kBFloat16;
    default: return torch::kFloat32;
  }
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
  const SafetensorsLayout layout = parse_safetensors(file, path);
  SafeTensors st;
  st.metadata = layout.metadata;
  for (const SafetensorsEntry& e : layout.tensors) {
    auto raw = torch::empty(e.shape, torch_type(e.dtype));
    const std::string_view bytes = layout.bytes_of(file, e);
    if (!bytes.empty()) std::memcpy(raw.data_ptr(), bytes.data(), bytes.size());
    st.tensors[e.name] = raw.to(torch::kFloat32).contiguous();
  }
  return st;
}

}  // namespace moxlab
