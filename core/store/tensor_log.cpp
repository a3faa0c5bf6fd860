// Layout helpers of the tensor log (see tensor_log.h) and the dtype vocabulary.
#include "core/store/tensor_log.h"

namespace moxlab {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::i32: return "int32";
    case DType::i64: return "int64";
    case DType::u8: return "uint8";
    case DType::str: return "string";
  }
  return "unknown";
}

namespace tensor_log {

std::string probe_dataset(const std::string& probe) { return std::string(kProbesGroup) + "/" + probe; }

void write_capture_header(TensorLogWriter& writer, std::int64_t run_id, const std::string& config_json) {
  writer.set_attr_int("/", kRunIdAttr, run_id);
  writer.set_attr("/", kConfigAttr, config_json);
  writer.set_attr_int("/", kLayoutVersionAttr, kLayoutVersion);
}

}  // namespace tensor_log
}  // namespace moxlab
