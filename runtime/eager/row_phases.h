/// \file row_phases.h
/// Private to runtime/eager: one input plane of a window op laid out so that the kernels' inner
/// loops run over whole output rows with full vectors. Row i of the plane (i over the two outer
/// spatial dims) is stored padded with a fill value on both sides and split into `stride`
/// phases, so that the value tap kd reads for output column j,
/// x[i][j * stride + kd * dilation - pad], is at(i, kd)[j]: contiguous in j, for every
/// j < width(), the output row rounded up to whole vectors, and the fill value where the tap
/// lies outside the row. The loops over these rows (vector_loops.h) have no scalar tails and
/// no per-tap column ranges; a max pool fills with -inf, which no maximum can notice.
#pragma once

#include <cstdint>
#include <vector>

#include "eager/window_geometry.h"

namespace kiln::eager {

class RowPhases {
 public:
  /// Whether the layout suits `g`: its rows, padded to whole vectors per phase, hold at most a
  /// few times the floats of the padded input rows (a stride far beyond the window, or a
  /// window reaching far past the input, would make them huge), and the plane at most 2^24.
  static bool fits(const Geometry& g);

  explicit RowPhases(const Geometry& g);

  /// Lays out one [D, H, W] plane, `fill` outside each row. Returns whether the plane holds
  /// a NaN.
  bool load(const float* plane, float fill);

  /// Row `row` (p0 * in[1] + p1) as innermost tap kd reads it, for the output columns
  /// [0, width()).
  const float* at(int64_t row, int64_t kd) const {
    return data_.data() + row * stride_ * phase_ + tap_[static_cast<size_t>(kd)];
  }

  /// The output row's columns rounded up to a multiple of 16.
  int64_t width() const { return width_; }

 private:
  int64_t rows_, in_, pad_, stride_, dil_, width_, phase_;
  std::vector<int64_t> tap_;   // per innermost tap: its phase's start within a row, plus its shift
  std::vector<float> data_;    // rows_ x stride_ phases x phase_ floats
  std::vector<float> padded_;  // one padded row, stride_ * phase_ floats (strides above 1)
};

}  // namespace kiln::eager
