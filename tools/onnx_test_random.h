// kiln onnx-test's verdict on cases with random ops, whose reference values come from NumPy's
// global generator and cannot be reproduced by any runtime (docs/conformance.md).
#pragma once

#include <string>

#include "kiln/tensor.h"

namespace kiln::tools {

/// Whether the case's model has a random node: Bernoulli, RandomUniform(Like),
/// RandomNormal(Like), Multinomial, or a Dropout given a training_mode input.
bool has_random_op(const std::string& case_dir);

/// Checks a random case on `device` with a fixed default seed: every output has the shape of
/// its reference, 0/1 values where the reference has only 0 and 1, and the same bits as the
/// interpreter's run of the same model (the run itself on the cpu). "" when it holds, else what
/// does not.
std::string check_random_case(const std::string& case_dir, Device device);

}  // namespace kiln::tools
