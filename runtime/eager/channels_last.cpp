// Depthwise convs and f32 max pools over channels-last copies of each image (channels_last.h),
// their lane loops in vector_loops.cpp.
#include "eager/channels_last.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "eager/conv_depthwise.h"
#include "eager/elementwise_loops.h"
#include "eager/vector_loops.h"

namespace kiln::eager {
namespace {

/// dst[j * rows + i] = src[i * cols + j]: a [rows, cols] matrix transposed, in tiles.
void transpose(const float* src, int64_t rows, int64_t cols, float* dst) {
  constexpr int64_t kTile = 16;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  parallel_for(row_tiles, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, kTile * cols)),
               [&](int64_t b, int64_t e) {
                 for (int64_t ti = b; ti < e; ++ti) {
                   const int64_t i0 = ti * kTile, i1 = std::min(rows, i0 + kTile);
                   for (int64_t j0 = 0; j0 < cols; j0 += kTile)
                     transpose_tile(src, rows, cols, dst, i0, i1, j0, std::min(cols, j0 + kTile));
                 }
               });
}

/// transpose() of `images` [rows, cols] matrices stored one after another.
void transpose_images(const float* src, int64_t images, int64_t rows, int64_t cols, float* dst) {
  for (int64_t n = 0; n < images; ++n)
    transpose(src + n * rows * cols, rows, cols, dst + n * rows * cols);
}

/// For each output row (fixed positions in the two outer spatial dims) of each of `images`
/// channels-last images, split over the cores (images and rows together: small maps have few
/// rows): start(n, row) with the row's first output position, then for each window tap inside
/// the input in row-major window order, each_tap(n, t, first output column, columns, first
/// input position).
template <typename Start, typename Tap>
void for_each_row_tap(const Geometry& g, int64_t images, int64_t lanes, Start&& start,
                      Tap&& each_tap) {
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t rows = g.out[0] * g.out[1];
  const InnerTaps inner(g);
  parallel_for(
      images * rows,
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.out[2] * taps * lanes)),
      [&](int64_t b, int64_t e) {
        for (int64_t n = b / rows; n * rows < e; ++n) {
          const int64_t r0 = std::max(b - n * rows, int64_t{0});
          const int64_t r1 = std::min(e - n * rows, rows);
          for_each_output_row(
              g, r0, r1, [&](int64_t r) { start(n, r * g.out[2]); },
              [&](int64_t r, int64_t t2, int64_t offset) {
                for (size_t kd = 0; kd < inner.shift.size(); ++kd) {
                  const int64_t lo = inner.lo[kd], hi = inner.hi[kd];
                  if (lo >= hi) continue;
                  each_tap(n, t2 * g.kernel[2] + static_cast<int64_t>(kd), r * g.out[2] + lo,
                           hi - lo, offset + lo * g.stride[2] + inner.shift[kd]);
                }
              });
        }
      });
}

}  // namespace

bool prefer_channels_last(const Geometry& g, bool pool) {
  static const int forced = [] {
    const char* v = std::getenv("KILN_CHANNELS_LAST");
    if (v == nullptr) return -1;
    return std::string_view(v) == "0" ? 0 : std::string_view(v) == "1" ? 1 : -1;
  }();
  if (forced >= 0) return forced == 1;
  // Measured on the zoo's CNNs (docs/perf.md): a depthwise conv's nine multiply-adds per input
  // pay for the two transposes from 16-wide rows down (from 8-wide rows down where the AVX-512
  // rows of conv_depthwise.h apply); a max pool's compares only on tiny planes.
  if (pool) return g.c >= 16 && g.out[2] <= 4;
  return g.c >= 16 && g.out[2] <= (depthwise_direct_applies(g) ? 8 : 16);
}

void depthwise_conv_channels_last(const Geometry& g, const float* x, const float* w,
                                  const float* bias, float* y) {
  const int64_t lanes = g.c, plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  if (g.n * taps * lanes == 0 || out_plane == 0) return;
  ScratchFloats wt, xt, yt;
  wt.reserve(static_cast<size_t>(taps * lanes));
  xt.reserve(static_cast<size_t>(g.n * plane * lanes));
  yt.reserve(static_cast<size_t>(g.n * out_plane * lanes));
  transpose(w, lanes, taps, wt.data);
  transpose_images(x, g.n, lanes, plane, xt.data);
  const int64_t s2 = g.stride[2] * lanes;
  for_each_row_tap(
      g, g.n, lanes,
      [&](int64_t n, int64_t o) {
        float* yr = yt.data + (n * out_plane + o) * lanes;
        for (int64_t i = 0; i < g.out[2]; ++i, yr += lanes) {
          if (bias)
            std::copy(bias, bias + lanes, yr);
          else
            std::fill(yr, yr + lanes, 0.0f);
        }
      },
      [&](int64_t n, int64_t t, int64_t o, int64_t count, int64_t p) {
        madd_positions(yt.data + (n * out_plane + o) * lanes, wt.data + t * lanes,
                       xt.data + (n * plane + p) * lanes, count, s2, lanes);
      });
  transpose_images(yt.data, g.n, out_plane, lanes, y);
}

std::vector<bool> max_pool_channels_last(const Geometry& g, const float* x, float* y) {
  const int64_t lanes = g.c, plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t rows = g.out[0] * g.out[1];
  std::vector<bool> nan_images(static_cast<size_t>(g.n), false);
  if (g.n * lanes == 0 || out_plane == 0) return nan_images;
  ScratchFloats xt, yt;
  xt.reserve(static_cast<size_t>(g.n * plane * lanes));
  yt.reserve(static_cast<size_t>(g.n * out_plane * lanes));
  transpose_images(x, g.n, lanes, plane, xt.data);
  const int64_t s2 = g.stride[2] * lanes;
  std::vector<char> nan_rows(static_cast<size_t>(g.n * rows), 0);  // one writer per row
  for_each_row_tap(
      g, g.n, lanes,
      [&](int64_t n, int64_t o) {
        float* yr = yt.data + (n * out_plane + o) * lanes;
        std::fill(yr, yr + g.out[2] * lanes, -std::numeric_limits<float>::infinity());
      },
      [&](int64_t n, int64_t, int64_t o, int64_t count, int64_t p) {
        if (max_positions(yt.data + (n * out_plane + o) * lanes,
                          xt.data + (n * plane + p) * lanes, count, s2, lanes))
          nan_rows[static_cast<size_t>(n * rows + o / g.out[2])] = 1;
      });
  for (int64_t n = 0; n < g.n; ++n) {
    const auto first = nan_rows.begin() + n * rows;
    nan_images[static_cast<size_t>(n)] = std::find(first, first + rows, 1) != first + rows;
  }
  transpose_images(yt.data, g.n, out_plane, lanes, y);
  return nan_images;
}

}  // namespace kiln::eager
