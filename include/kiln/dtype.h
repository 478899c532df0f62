/// \file dtype.h
/// Element types and tensor metadata shared by every layer.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kiln {

/// kC64 (complex64) is two floats, real then imaginary part (std::complex<float>'s layout). Most
/// ops reject it with a clear error; the FFTs and the complex part ops (kiln/fft.h) take it.
#define KILN_DTYPES(X)         \
  X(kF32, "f32", float, 4)     \
  X(kF16, "f16", uint16_t, 2)  \
  X(kI32, "i32", int32_t, 4)   \
  X(kI64, "i64", int64_t, 8)   \
  X(kBool, "bool", uint8_t, 1) \
  X(kC64, "c64", std::complex<float>, 8)

enum class DType : uint8_t {
#define KILN_DTYPE_ENUM(name, str, ctype, size) name,
  KILN_DTYPES(KILN_DTYPE_ENUM)
#undef KILN_DTYPE_ENUM
};

const char* dtype_name(DType dtype);
size_t dtype_size(DType dtype);
bool is_floating(DType dtype);
bool is_integral(DType dtype);  // i32, i64 (not bool)
bool is_complex(DType dtype);   // c64
/// Result type of a binary arithmetic op: bool < i32 < i64 < f16 < f32 (< c64, which the
/// elementwise ops reject).
DType promote_types(DType a, DType b);

/// The DType of a C++ element type: float, int32_t, int64_t, bool, std::complex<float> (f16
/// data goes through Tensor::from_bytes). Any other type is a compile error here, not a link
/// error later.
template <typename T>
constexpr DType dtype_of() = delete;
template <>
constexpr DType dtype_of<float>() {
  return DType::kF32;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kI32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kI64;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}
template <>
constexpr DType dtype_of<std::complex<float>>() {
  return DType::kC64;
}

/// IEEE half <-> float (round to nearest even).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

using Dim = int64_t;
using Shape = std::vector<Dim>;

int64_t numel(std::span<const Dim> shape);
std::string shape_str(std::span<const Dim> shape);
/// Row-major contiguous strides, in elements.
std::vector<int64_t> contiguous_strides(std::span<const Dim> shape);

struct TensorMeta {
  DType dtype = DType::kF32;
  Shape shape;

  int64_t numel() const { return kiln::numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
  std::string str() const;  // "f32[2, 3]"
  bool operator==(const TensorMeta&) const = default;
};

}  // namespace kiln
