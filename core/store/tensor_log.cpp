// The dtype vocabulary shared by the tensor-log writer and reader.
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

}  // namespace moxlab
