/// \file float_math.h
/// Private to runtime/eager: float functions of the interpreter written for the vectoriser, where
/// glibc's scalar ones dominated a model's time (gpt2's tanh-GELU). Each is evaluated in double
/// and rounded once to float, so it lies within 1 ulp of the exact value (checked over every
/// float); the batch form gives the same bits as the scalar one for every input.
#pragma once

#include <cstdint>

namespace kiln::eager {

/// tanh(x): odd; +-1 beyond about 9; a NaN input is returned quieted.
float tanh_float(float x);
/// y[i] = tanh_float(x[i]) for i < n (x and y do not overlap).
void tanh_floats(const float* x, float* y, int64_t n);

}  // namespace kiln::eager
