// Reader and writer of the safetensors format (huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {string: string}}, then the raw little-endian tensor bytes, offsets relative to the
// start of that data. moxlab writes F32 only (exact round trip of its float32 weights); it reads F32,
// F16 and BF16 (the dtypes public checkpoints ship in) and converts them to float32.
#pragma once
#include <map>
#include <string>

#include <torch/torch.h>

namespace moxlab {

struct SafeTensors {
  std::map<std::string, torch::Tensor> tensors;  // float32, CPU, contiguous
  std::map<std::string, std::string> metadata;   // "__metadata__"
};

// Writes every tensor as F32 (converted, made contiguous) atomically. The header is padded with spaces
// to a multiple of 8 bytes, as the reference implementation does, so the data starts aligned.
void write_safetensors(const std::string& path, const std::map<std::string, torch::Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Throws Error naming the file for a missing, truncated or malformed file, an unsupported dtype, bytes
// that belong to no tensor, or a NaN/Inf value (naming the tensor): see core/formats/safetensors_format.h.
SafeTensors read_safetensors(const std::string& path);

}  // namespace moxlab
