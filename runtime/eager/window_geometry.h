/// \file window_geometry.h
/// Private to runtime/eager: the geometry of a window op (conv, pools) over exactly three spatial
/// dims (missing ones of size 1 with a trivial window), the loops over its outputs and taps and
/// the scratch buffers of its kernels, shared by interpreter_window.cpp (conv),
/// interpreter_pool.cpp (max and average pools) and channels_last.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/host_memory.h"
#include "graph/graph.h"

namespace kiln::eager {

/// What a conv kernel applies to runs of its outputs right after writing them, while they are
/// in cache: post(p, n) maps p[0, n) in place, elementwise (the interpreter's fusion of a Conv
/// with the chain of elementwise ops that alone reads it). Called from any thread.
using OutputRuns = std::function<void(float* p, int64_t n)>;


/// Scratch floats for the window kernels (im2col, channels-last copies): not zeroed (the
/// kernels write every element), from the host block cache, so that a conv does not fault in
/// and clear a fresh buffer on every call.
struct ScratchFloats {
  float* data = nullptr;
  size_t bytes = 0;
  ScratchFloats() = default;
  ScratchFloats(const ScratchFloats&) = delete;
  ScratchFloats& operator=(const ScratchFloats&) = delete;
  ~ScratchFloats() { host_memory::free_large(data, bytes); }
  void reserve(size_t count) {
    if (count == 0) return;
    bytes = count * sizeof(float);
    data = static_cast<float*>(host_memory::allocate_large(bytes));
  }
};

/// A window op's geometry over exactly three spatial dims.
struct Geometry {
  int64_t n = 1, c = 1, c_out = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0},
      pad_end{0, 0, 0}, dil{1, 1, 1};
};

inline Geometry geometry(const Node& node, const Shape& x, const Shape& out, const Shape* w) {
  Geometry g;
  const auto& at = node.attrs.window;
  const size_t k = x.size() - 2, lead = 3 - k;
  g.n = x[0];
  g.c = x[1];
  g.c_out = out[1];
  for (size_t i = 0; i < k; ++i) {
    g.in[lead + i] = x[2 + i];
    g.out[lead + i] = out[2 + i];
    g.kernel[lead + i] = w ? (*w)[2 + i] : at.kernel[i];
    g.stride[lead + i] = at.strides[i];
    g.pad[lead + i] = at.pads[i];
    g.pad_end[lead + i] = at.pads[k + i];
    g.dil[lead + i] = at.dilations[i];
  }
  return g;
}

/// Calls fn(n, c, o[3], out_offset) for every output element in row-major order.
template <typename Fn>
void for_each_output(const Geometry& g, Fn&& fn) {
  int64_t o = 0;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c_out; ++c)
      for (int64_t a = 0; a < g.out[0]; ++a)
        for (int64_t b = 0; b < g.out[1]; ++b)
          for (int64_t d = 0; d < g.out[2]; ++d) fn(n, c, std::array<int64_t, 3>{a, b, d}, o++);
}

/// Calls fn(offset within one [D, H, W] plane, window index) for the window positions of output
/// position `o` that lie inside the input.
template <typename Fn>
void for_each_tap(const Geometry& g, const std::array<int64_t, 3>& o, Fn&& fn) {
  for (int64_t a = 0; a < g.kernel[0]; ++a) {
    const int64_t p0 = o[0] * g.stride[0] - g.pad[0] + a * g.dil[0];
    if (p0 < 0 || p0 >= g.in[0]) continue;
    for (int64_t b = 0; b < g.kernel[1]; ++b) {
      const int64_t p1 = o[1] * g.stride[1] - g.pad[1] + b * g.dil[1];
      if (p1 < 0 || p1 >= g.in[1]) continue;
      for (int64_t d = 0; d < g.kernel[2]; ++d) {
        const int64_t p2 = o[2] * g.stride[2] - g.pad[2] + d * g.dil[2];
        if (p2 < 0 || p2 >= g.in[2]) continue;
        fn((p0 * g.in[1] + p1) * g.in[2] + p2, (a * g.kernel[1] + b) * g.kernel[2] + d);
      }
    }
  }
}

/// Window positions of output `o` inside the padded input [-pad, in + pad_end) per dim.
inline int64_t padded_count(const Geometry& g, const std::array<int64_t, 3>& o) {
  int64_t count = 1;
  for (size_t i = 0; i < 3; ++i) {
    int64_t c = 0;
    for (int64_t k = 0; k < g.kernel[i]; ++k) {
      const int64_t p = o[i] * g.stride[i] - g.pad[i] + k * g.dil[i];
      c += p >= -g.pad[i] && p < g.in[i] + g.pad_end[i];
    }
    count *= c;
  }
  return count;
}

/// The columns [lo, hi) of an output row whose tap at offset `shift` (kd * dilation - pad) falls
/// inside an input row of `in` elements, read at od * stride + shift.
inline std::pair<int64_t, int64_t> columns_inside(int64_t shift, int64_t stride, int64_t in,
                                                  int64_t out) {
  int64_t lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  int64_t hi = in - 1 - shift < 0 ? 0 : (in - 1 - shift) / stride + 1;
  lo = std::min(lo, out);
  return {lo, std::clamp(hi, lo, out)};
}

/// The innermost window taps of a geometry: for tap kd, its offset in an input row (`shift`) and
/// the output columns [lo, hi) whose tap kd falls inside the row. Computed once per op.
struct InnerTaps {
  std::vector<int64_t> shift, lo, hi;
  explicit InnerTaps(const Geometry& g)
      : shift(static_cast<size_t>(g.kernel[2])), lo(shift.size()), hi(shift.size()) {
    for (size_t kd = 0; kd < shift.size(); ++kd) {
      shift[kd] = static_cast<int64_t>(kd) * g.dil[2] - g.pad[2];
      std::tie(lo[kd], hi[kd]) = columns_inside(shift[kd], g.stride[2], g.in[2], g.out[2]);
    }
  }
};

/// The output rows [r0, r1) of one plane (a row: fixed positions in the two outer spatial dims)
/// in order: for row r, start(r), then tap(r, t, offset) for each pair of outer window taps
/// inside the input, in window order, with t = ka * kernel[1] + kb and `offset` the start of
/// the input row they read within one [D, H, W] plane, then finish(r).
template <typename Start, typename Tap, typename Finish>
void for_each_output_row(const Geometry& g, int64_t r0, int64_t r1, Start&& start, Tap&& tap,
                         Finish&& finish) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t oa = r / g.out[1], ob = r % g.out[1];
    start(r);
    for (int64_t ka = 0; ka < g.kernel[0]; ++ka) {
      const int64_t p0 = oa * g.stride[0] - g.pad[0] + ka * g.dil[0];
      if (p0 < 0 || p0 >= g.in[0]) continue;
      for (int64_t kb = 0; kb < g.kernel[1]; ++kb) {
        const int64_t p1 = ob * g.stride[1] - g.pad[1] + kb * g.dil[1];
        if (p1 < 0 || p1 >= g.in[1]) continue;
        tap(r, ka * g.kernel[1] + kb, (p0 * g.in[1] + p1) * g.in[2]);
      }
    }
    finish(r);
  }
}

/// As above, with nothing to finish a row.
template <typename Start, typename Tap>
void for_each_output_row(const Geometry& g, int64_t r0, int64_t r1, Start&& start, Tap&& tap) {
  for_each_output_row(g, r0, r1, start, tap, [](int64_t) {});
}

/// Every output row of one plane, as above.
template <typename Start, typename Tap>
void for_each_output_row(const Geometry& g, Start&& start, Tap&& tap) {
  for_each_output_row(g, 0, g.out[0] * g.out[1], start, tap);
}

}  // namespace kiln::eager
