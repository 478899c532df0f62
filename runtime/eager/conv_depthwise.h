/// \file conv_depthwise.h
/// Private to runtime/eager: f32 depthwise convs (one input channel per output channel, any
/// channel multiplier) on AVX-512, one output row of a plane at a time in 16-lane vectors, read
/// from the input as it is (with stride 2, 32 floats from a tap's first column and the even
/// ones kept): no copies, no calls per tap. Each tap's columns inside the input are a lane
/// mask, so padding taps are skipped exactly as the planar loops skip them.
///
/// Each output is the bias (or 0), then per window tap inside the input in row-major window
/// order one product and one sum, each rounded to float: the same sequence, and the same bits,
/// as the interpreter's other depthwise loops (docs/ops.md).
#pragma once

#include "eager/window_geometry.h"

namespace kiln::eager {

/// Whether depthwise_direct computes a depthwise conv of geometry `g`: 1-D or 2-D, strides 1
/// or 2, pads >= 0, on a CPU with AVX-512 (KILN_CONV_DIRECT=0 turns it off).
bool depthwise_direct_applies(const Geometry& g);

/// y = the depthwise conv of x by w ([c_out, 1, kh, kw]) + bias (may be null), NC[H]W; with
/// `post`, each range of planes then goes through it.
void depthwise_direct(const Geometry& g, const float* x, const float* w, const float* bias,
                      float* y, const OutputRuns& post = {});

}  // namespace kiln::eager
