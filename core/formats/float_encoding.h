// The raw float encodings weight files store (IEEE float32, float16, bfloat16; little-endian) and a
// scan for NaN/Inf values in their bytes, done on the exponent bits so that it needs no conversion and
// cannot trap. A non-finite weight poisons every forward pass that touches it (generation then prints
// only the prompt), and no real checkpoint of the LLaMA family holds one, so importers refuse them.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace moxlab {

enum class FloatEncoding { f32, f16, bf16 };

inline std::size_t encoding_bytes(FloatEncoding e) { return e == FloatEncoding::f32 ? 4 : 2; }

struct NonFiniteCount {
  std::uint64_t count = 0;  // NaN and ±Inf values
  std::uint64_t first = 0;  // element index of the first one (when count > 0)
};

// `bytes` holds whole elements of encoding e (a trailing partial element is ignored).
NonFiniteCount count_nonfinite(std::string_view bytes, FloatEncoding e);

// Throws Error "<what> holds N NaN/Inf values (first at element I of M)" when any element is not finite;
// `what` names the file and tensor, e.g. "safetensors file X: tensor model.norm.weight".
void require_finite(std::string_view bytes, FloatEncoding e, const std::string& what);

}  // namespace moxlab
