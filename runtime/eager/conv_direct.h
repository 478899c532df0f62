/// \file conv_direct.h
/// Private to runtime/eager: f32 convs as a product whose right operand is never stored. With
/// every stride 1, output position (oy, ox) reads the input at (oy + ky·d, ox + kx·d), so over a
/// zero-padded copy of each image whose rows are `pitch` floats apart, the inputs of consecutive
/// positions q = oy·pitch + ox are consecutive floats for every tap: tap (c, ky, kx) of
/// positions q..q+31 is one contiguous run at q + offset(c, ky, kx). With strides (sy, sx) the
/// padded copy is split into sy·sx phase planes (rows ≡ py mod sy, columns ≡ px mod sx), in
/// which a tap's inputs are again one contiguous run per row of outputs. A micro-kernel keeps 8
/// output channels x 32 positions in vector registers and, per tap, loads two vectors of the
/// padded input and broadcasts 8 weights. No im2col matrix is written and neither operand is
/// packed: the weight is read as it is stored. The positions at the end of each padded (or
/// phase) row past the last output column are computed and dropped.
///
/// Each output is the bias (or 0) followed by the taps in the weight's order (input channel,
/// then window row, then column), one fused multiply-add each, in float: the same value
/// whatever the blocking and the threads.
#pragma once

#include "eager/window_geometry.h"

namespace kiln::eager {

/// Whether the direct conv kernels run here: a CPU with AVX-512, and KILN_CONV_DIRECT not 0.
bool direct_convs_enabled();

/// Whether conv_direct computes a conv of geometry `g`: 1-D or 2-D, strides 1 to 4, pads >= 0,
/// on a CPU with AVX-512 (elsewhere the caller's im2col + sgemm). KILN_CONV_DIRECT=0 turns it
/// off, for comparisons and tests.
bool conv_direct_applies(const Geometry& g);

/// y = conv(x, w) + bias (bias may be null) for `groups` groups, all f32 in NC[D]HW order;
/// with `relu`, each output then goes through Relu (y < 0 ? 0 : y, as the Relu op computes it);
/// with `post`, each output then goes through it.
void conv_direct(const Geometry& g, int64_t groups, const float* x, const float* w,
                 const float* bias, float* y, bool relu = false, const OutputRuns& post = {});

}  // namespace kiln::eager
