/// \file vector_loops.h
/// Private to runtime/eager: the innermost float loops of the window kernels (convs, pools),
/// compiled for AVX-512 and AVX2 as well as the baseline (ifunc clones, chosen once at load).
/// kiln_eager contracts no multiply-add (-ffp-contract=off), so every clone computes the same
/// IEEE operations in the same order: a product rounded, then a sum rounded; a max by strict >
/// (the first of equal values stays). Each returns whether it read a NaN where that matters.
#pragma once

#include <cstdint>

namespace kiln::eager {

/// y[i] += w * x[i * stride] for i < count.
void madd_strided(float* y, float w, const float* x, int64_t count, int64_t stride);

/// y[i] = x[i * stride] for i < count (im2col's rows: short ones, where a memmove call costs
/// more than the copy).
void copy_strided(float* y, const float* x, int64_t count, int64_t stride);

/// For `count` positions `lanes` apart in y and `x_step` apart in x: y[c] += w[c] * x[c] for
/// c < lanes (channels-last: the lanes are channels).
void madd_positions(float* y, const float* w, const float* x, int64_t count, int64_t x_step,
                    int64_t lanes);

/// The same positions: y[c] = x[c] > y[c] ? x[c] : y[c]. Returns whether any x was a NaN.
bool max_positions(float* y, const float* x, int64_t count, int64_t x_step, int64_t lanes);

/// y[j] = the maximum (strict >, from -inf) of rows[t][j] over t < count, for j < width (a NaN
/// is never taken).
void max_rows(float* y, const float* const* rows, int64_t count, int64_t width);

/// y[i] = y[i] < 0 ? 0 : y[i] for i < count: the Relu op's function (NaN and -0 stay).
void relu_in_place(float* y, int64_t count);

/// The f32 binary ops that elementwise loops run through binary_row.
enum class BinaryRowOp { kAdd, kSub, kMul, kDiv, kMax, kMin };

/// o[i] = op(a[i * sa], b[i * sb]) for i < n, where (sa, sb) is (1, 1), (1, 0) or (0, 1) (a
/// stride of 0: one value broadcast) and o overlaps neither: a + b, a - b, a * b, a / b, and
/// the Max / Min ops' max(a, b) = (a is NaN or a > b) ? a : b, min likewise with <. The same
/// functions as the interpreter's elementwise kernels (interpreter_ops.cpp), element for
/// element the same bits.
void binary_row(BinaryRowOp op, float* o, const float* a, int64_t sa, const float* b, int64_t sb,
                int64_t n);

/// One [h, w] plane of a 2-D max pool over a window of kh x kw taps (strides s, pads p before,
/// dilations d, each {rows, columns}) into y [oh, ow], for a plane without NaN: each output is
/// the maximum (strict >, from -inf) over the taps inside the plane in row-major window order,
/// computed as each input row's maximum over its taps along the row (once per input row, into
/// `rows`: h * ow floats), then the maximum of those over the window's rows in order. For
/// strict > that is the same value and the same bits (the first of equal zeros stays): the
/// first tap in window order that attains the maximum wins either way.
struct Pool2d {
  int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};
void max_pool_plane_2d(const Pool2d& p, const float* x, float* y, float* rows);

/// Whether any of x[0, count) is a NaN.
bool any_nan(const float* x, int64_t count);

/// dst[p * count + m] = src[m * stride + p] for p < stride, m < count: a row split into its
/// `stride` phases.
void deinterleave(float* dst, const float* src, int64_t count, int64_t stride);

/// dst[j * rows + i] = src[i * cols + j] for the tile of rows [i0, i1) and columns [j0, j1) of
/// a [rows, cols] matrix.
void transpose_tile(const float* src, int64_t rows, int64_t cols, float* dst, int64_t i0,
                    int64_t i1, int64_t j0, int64_t j1);

}  // namespace kiln::eager
