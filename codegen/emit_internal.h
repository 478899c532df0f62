/// \file emit_internal.h
/// Shared by the Emitter's source files (emit*.cpp, glsl_types.cpp); not part of its interface.
#pragma once

#include <cstdint>

#include "kiln/dtype.h"

namespace kiln {

/// A literal's value as the interpreter holds it: an exact integer or a float.
struct Literal {
  bool integral = false;
  int64_t i = 0;
  double f = 0;
};
/// `x` encoded into `dtype` as the interpreter stores it (casts and Full's encoding).
Literal encode_literal(const Literal& x, DType dtype);

}  // namespace kiln
