/// \file npy_header.h
/// The header dict of a .npy file: a strict parser for the Python literal NumPy writes
/// ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") and its formatter.
#pragma once

#include <string>
#include <string_view>

#include "kiln/dtype.h"
#include "kiln/status.h"

namespace kiln::io {

struct NpyHeader {
  std::string descr;  // as written, e.g. "<f4"
  DType dtype = DType::kF32;
  size_t item_size = 4;
  bool swap = false;  // the data's byte order differs from the host's
  bool fortran_order = false;
  Shape shape;
};

/// Parses the header text (the bytes between the length field and the data). The dict must
/// hold exactly the keys 'descr', 'fortran_order' and 'shape' (any order, optional trailing
/// comma); only whitespace may follow it. Errors are invalid_argument and say what is wrong.
Expected<NpyHeader> parse_npy_header(std::string_view text);

/// The descr NumPy writes for `dtype` on a little-endian machine ("<f4", "|b1", ...).
const char* npy_descr(DType dtype);

/// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" (no padding).
std::string format_npy_header_dict(DType dtype, const Shape& shape);

/// A shape as a Python tuple: "()", "(3,)", "(2, 3)".
std::string npy_shape_str(const Shape& shape);

}  // namespace kiln::io
