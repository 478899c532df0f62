#pragma once
// Whether a tensor of a given shape and element type can exist at all: every size at least
// 0, and the element and byte counts representable in int64. numel() multiplies without
// checking, so a shape such as [2^62, 16] would otherwise read as 0 elements and every later
// loop over it would index past its buffer. Checked where tensors are made (Tensor::from_bytes,
// Tensor::full) and where every op's result meta is formed (Graph::add).
#include <cstdint>
#include <span>
#include <string>

#include "kiln/dtype.h"

namespace kiln {

/// Why no tensor of `shape` and `dtype` can exist, or "" when one can.
inline std::string tensor_size_error(std::span<const Dim> shape, DType dtype) {
  bool empty = false;
  for (Dim d : shape) {
    if (d < 0) return "negative size in shape " + shape_str(shape);
    if (d == 0) empty = true;
  }
  if (empty) return "";
  int64_t n = 1;
  for (Dim d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return "shape " + shape_str(shape) + " has more than 2^63 elements";
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(dtype)), &bytes))
    return "shape " + shape_str(shape) + " of " + dtype_name(dtype) + " needs more than 2^63 bytes";
  return "";
}

}  // namespace kiln
