/// \file channels_last.h
/// Private to runtime/eager: depthwise convs and f32 max pools over a channels-last copy of
/// each image ([positions, channels]), so that the vector lanes run over channels. The small
/// planes of mobile networks (8x8 down to 1x1) give row loops of a few elements, where most of
/// the time went to loop overhead; a channels-last loop is as long as the channel count at any
/// plane size. Each output element is the same float sequence as the planar loops compute
/// (interpreter_window.cpp, interpreter_pool.cpp): the start value, then each window tap inside
/// the input in row-major window order.
#pragma once

#include <cstdint>
#include <vector>

#include "eager/window_geometry.h"

namespace kiln::eager {

/// Whether the channels-last loops are the faster way for this conv (or, with `pool`, max pool)
/// geometry: many channels, short output rows. `KILN_CHANNELS_LAST=0` (or `1`) turns the choice
/// off (or on for every geometry they handle), for comparisons and tests.
bool prefer_channels_last(const Geometry& g, bool pool);

/// y = depthwise conv (one input channel per output channel, channel multiplier 1) of x with
/// w [C, taps] and an optional bias, all f32 in NC[D]HW order; the transposes in and out are
/// part of the call.
void depthwise_conv_channels_last(const Geometry& g, const float* x, const float* w,
                                  const float* bias, float* y);

/// y = f32 max pool of x (NC[D]HW) for the images whose windows read no NaN, as the planar loop
/// computes it (strict >: the first of equal values stays; an empty window gives -inf). Returns
/// the images that did read a NaN, as flags per image, for the caller's exact loop.
std::vector<bool> max_pool_channels_last(const Geometry& g, const float* x, float* y);

}  // namespace kiln::eager
