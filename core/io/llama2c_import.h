// Import of llama2.c model files (Karpathy's format, e.g. stories260K.bin) into moxlab's Transformer.
// The file is checked by core/formats/llama2c_format.h before anything is built; this part copies the
// checked bytes into the model. llama2.c's RoPE is the interleaved-pair convention moxlab uses, so no
// weight permutation is needed.
#pragma once
#include <memory>
#include <string>

#include "core/config/config.h"
#include "core/model/transformer.h"

namespace moxlab {

struct ImportedModel {
  Config config;
  std::shared_ptr<Transformer> model;
};

// Throws Error for a missing file, a header out of range or not matching the file's size, or a NaN/Inf
// weight (naming the tensor and layer).
ImportedModel import_llama2c(const std::string& model_path, const std::string& tokenizer_spec);

}  // namespace moxlab
