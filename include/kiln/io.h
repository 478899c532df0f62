/// \file io.h
/// NumPy .npy files: read and write kiln::Tensor data (docs/io.md).
///
/// The reader follows the .npy format specification (versions 1.0, 2.0 and 3.0) and is strict:
/// any malformed, truncated or unsupported file gives an invalid_argument Status that says
/// what is wrong (and, for load_npy, names the file). It never reads outside the bytes it is
/// given and checks every size against them before allocating.
///
/// Supported dtypes: '<f4' (f32), '<f2' (f16), '<i4' (i32), '<i8' (i64) and '|b1' (bool), in
/// either byte order (big-endian data is byte-swapped). C order only.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

/// Reads the .npy file at `path` into a new tensor on `device`.
Expected<Tensor> load_npy(const std::string& path, Device device = Device::cpu());

/// Parses the bytes of a whole .npy file (magic, header and data; nothing after the data).
Expected<Tensor> parse_npy(std::span<const std::byte> bytes, Device device = Device::cpu());

/// Writes `t` to `path` as a version 1.0 .npy file (little-endian, C order). Fails for
/// undefined or traced tensors and for I/O errors.
Status save_npy(const std::string& path, const Tensor& t);

/// The bytes save_npy writes. Throws kiln::Error for undefined or traced tensors.
std::vector<std::byte> serialize_npy(const Tensor& t);

}  // namespace kiln
