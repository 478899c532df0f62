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

/// exp(y) in double for y <= 0 (softmax's exp(x - max)), -inf (0) or NaN (NaN): within an ulp
/// of the exact value, rounded once where it is subnormal, 0 below -746.
double softmax_exp(double y);
/// ex[i] = softmax_exp(double(x[i]) - m) for i < n: the same bits as the scalar function.
void softmax_exps(const float* x, float m, double* ex, int64_t n);
/// The maximum of x[0, n) ignoring NaNs (-inf when n is 0 or all are NaN); a zero maximum may
/// have either sign.
float max_ignoring_nan(const float* x, int64_t n);

}  // namespace kiln::eager
