// Element types of tensor-log datasets and the C++ types that map to them.
#pragma once
#include <cstdint>

namespace moxlab {

enum class DType { f32, f64, i32, i64, u8, str };

const char* dtype_name(DType t);  // "float32", "float64", "int32", "int64", "uint8", "string"

// TensorDType<T>::value for the numeric element types the tensor log stores. Other types have no
// specialisation, so using them with the templated read/write calls fails to compile.
template <class T>
struct TensorDType;
template <> struct TensorDType<float> { static constexpr DType value = DType::f32; };
template <> struct TensorDType<double> { static constexpr DType value = DType::f64; };
template <> struct TensorDType<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct TensorDType<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct TensorDType<std::uint8_t> { static constexpr DType value = DType::u8; };

}  // namespace moxlab
