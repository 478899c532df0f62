// Whole-file reads for the ONNX front end.
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln::onnx {

/// The bytes of the file at `path`, or invalid_argument naming it.
Expected<std::string> read_file(const std::string& path);

}  // namespace kiln::onnx
