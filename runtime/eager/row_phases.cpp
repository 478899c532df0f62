#include "eager/row_phases.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "eager/vector_loops.h"

namespace kiln::eager {

namespace {

/// Padded floats per phase for `g` (whole vectors of 16), in double: no overflow for any
/// attributes.
double phase_length(const Geometry& g) {
  const double width = std::ceil(static_cast<double>(g.out[2]) / 16.0) * 16.0;
  const double reach = width + std::floor(static_cast<double>(g.kernel[2] - 1) *
                                          static_cast<double>(g.dil[2]) /
                                          static_cast<double>(g.stride[2])) + 1.0;
  return std::ceil(reach / 16.0) * 16.0;
}

}  // namespace

bool RowPhases::fits(const Geometry& g) {
  const double row = phase_length(g) * static_cast<double>(g.stride[2]);
  const double padded_in = static_cast<double>(g.in[2] + g.pad[2] + g.pad_end[2]);
  const double rows = static_cast<double>(g.in[0]) * static_cast<double>(g.in[1]);
  return g.in[2] > 0 && row <= 4.0 * padded_in + 64.0 && row * rows <= double{1 << 24};
}

RowPhases::RowPhases(const Geometry& g)
    : rows_(g.in[0] * g.in[1]),
      in_(g.in[2]),
      pad_(g.pad[2]),
      stride_(g.stride[2]),
      dil_(g.dil[2]),
      width_((g.out[2] + 15) / 16 * 16) {
  // Phase m holds padded positions m * stride + p; the last tap of the last column reads
  // (width - 1) * stride + (kernel - 1) * dilation. Whole vectors of 16 per phase, so that
  // splitting a row into phases needs no tail either.
  phase_ = static_cast<int64_t>(phase_length(g));
  for (int64_t kd = 0; kd < g.kernel[2]; ++kd) {
    const int64_t q = kd * dil_;
    tap_.push_back(q % stride_ * phase_ + q / stride_);
  }
  data_.resize(static_cast<size_t>(rows_ * stride_ * phase_));
  if (stride_ > 1) padded_.resize(static_cast<size_t>(stride_ * phase_));
}

bool RowPhases::load(const float* plane, float fill) {
  const bool nan = any_nan(plane, rows_ * in_);
  const int64_t len = stride_ * phase_;  // padded positions per row
  // Row positions [pad, pad + in) hold the input, clipped to the positions any tap reads.
  const int64_t lo = std::min(pad_, len), hi = std::clamp(pad_ + in_, lo, len);
  for (int64_t r = 0; r < rows_; ++r) {
    float* dst = stride_ == 1 ? data_.data() + r * phase_ : padded_.data();
    std::fill(dst, dst + lo, fill);
    if (hi > lo) std::memcpy(dst + lo, plane + r * in_ + (lo - pad_), (hi - lo) * sizeof(float));
    std::fill(dst + hi, dst + len, fill);
    if (stride_ > 1) deinterleave(data_.data() + r * stride_ * phase_, dst, phase_, stride_);
  }
  return nan;
}

}  // namespace kiln::eager
