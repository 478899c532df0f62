#include "kiln/dtype.h"

#include <bit>
#include <cstring>

#include "kiln/status.h"

namespace kiln {

const char* dtype_name(DType dtype) {
  switch (dtype) {
#define KILN_DTYPE_NAME(name, str, ctype, size) \
  case DType::name:                             \
    return str;
    KILN_DTYPES(KILN_DTYPE_NAME)
#undef KILN_DTYPE_NAME
  }
  unreachable("bad dtype");
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
#define KILN_DTYPE_SIZE(name, str, ctype, size) \
  case DType::name:                             \
    return size;
    KILN_DTYPES(KILN_DTYPE_SIZE)
#undef KILN_DTYPE_SIZE
  }
  unreachable("bad dtype");
}

bool is_floating(DType d) {
  return d == DType::kF32 || d == DType::kF16;
}
bool is_integral(DType d) {
  return d == DType::kI32 || d == DType::kI64;
}
bool is_complex(DType d) {
  return d == DType::kC64;
}

static int promote_rank(DType d) {
  switch (d) {
    case DType::kBool:
      return 0;
    case DType::kI32:
      return 1;
    case DType::kI64:
      return 2;
    case DType::kF16:
      return 3;
    case DType::kF32:
      return 4;
    case DType::kC64:
      return 5;
  }
  unreachable("bad dtype");
}

DType promote_types(DType a, DType b) {
  return promote_rank(a) >= promote_rank(b) ? a : b;
}

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));  // inf/nan
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {                                                 // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // may carry into exponent: correct
  return static_cast<uint16_t>(h);
}

float half_to_float(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(x);
}

int64_t numel(std::span<const Dim> shape) {
  int64_t n = 1;
  for (Dim d : shape) n *= d;
  return n;
}

std::string shape_str(std::span<const Dim> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<int64_t> contiguous_strides(std::span<const Dim> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::string TensorMeta::str() const {
  return std::string(dtype_name(dtype)) + shape_str(shape);
}

}  // namespace kiln
