// The CPU interpreter's pools (reference semantics, ONNX's):
//   MaxPool: the maximum over the window's positions inside the input (NaN propagates; a
//     window with no position inside the input gives -inf, or the integer minimum).
//   MaxPoolIndices: the flat index into x (over N, C and the spatial dims; storage_order 1
//     orders the spatial dims column-major) of the first maximum in window order (row-major
//     over the window; the first NaN wins); an empty window gives the window's channel base.
//   AvgPool: the double sum over positions inside the input divided by their count, or with
//     count_include_pad by the count of positions inside the padded input
//     [-pad_begin, D + pad_end) per dim (0 / 0 = NaN for an empty window).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "eager/channels_last.h"
#include "eager/elementwise_loops.h"
#include "eager/interpreter_ops.h"
#include "eager/row_phases.h"
#include "eager/vector_loops.h"
#include "eager/window_geometry.h"

namespace kiln::eager {
namespace {

/// One plane of an f32 max pool, output by output in window order exactly as max_pool's generic
/// loop: the first tap taken, then any greater value or a NaN, and nothing after a NaN.
void max_pool_plane_exact(const Geometry& g, const float* xc, float* y) {
  for (int64_t a = 0; a < g.out[0]; ++a)
    for (int64_t b = 0; b < g.out[1]; ++b)
      for (int64_t d = 0; d < g.out[2]; ++d) {
        float acc = -std::numeric_limits<float>::infinity();
        bool any = false;
        for_each_tap(g, {a, b, d}, [&](int64_t p, int64_t) {
          const float v = xc[p];
          if (std::isnan(acc)) return;
          if (v > acc || !any || std::isnan(v)) acc = v;
          any = true;
        });
        *y++ = acc;
      }
}

/// f32 max pool: channels-last where that is faster (channels_last.h), else planes (image,
/// channel) split over the cores: 1-D and 2-D planes by max_pool_plane_2d (vector_loops.h), 3-D
/// ones laid out as row phases (row_phases.h: -inf outside the input) and reduced one output
/// row at a time over whole vectors. Each output row is built
/// tap by tap in window order with y = v > y ? v : y (a vector max) from -inf, which gives what
/// the exact loop gives whenever the window holds no NaN (strict >: the first of equal values
/// stays; a tap in the padding reads -inf, which changes nothing; an empty window stays -inf).
/// A plane with a NaN is redone by the exact loop.
void max_pool_f32(const Geometry& g, const float* x, float* out) {
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  if (prefer_channels_last(g, true)) {
    const std::vector<bool> nan = max_pool_channels_last(g, x, out);
    for (int64_t n = 0; n < g.n; ++n)
      if (nan[static_cast<size_t>(n)])
        for (int64_t pc = n * g.c; pc < (n + 1) * g.c; ++pc)
          max_pool_plane_exact(g, x + pc * plane, out + pc * out_plane);
    return;
  }
  if (out_plane == 0) return;
  // 1-D and 2-D (its row maxima, in[1] x out[2] floats per thread, a few planes at most: not for
  // absurd pads): row maxima once per input row, then over the window's rows.
  if (g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.pad[0] == 0 && g.pad_end[0] == 0 &&
      double(g.in[1]) * double(g.out[2]) <= 4.0 * double(plane + out_plane) + 4096.0) {
    const Pool2d p{g.in[1],     g.in[2],     g.out[1], g.out[2], g.kernel[1], g.kernel[2],
                   g.stride[1], g.stride[2], g.pad[1], g.pad[2], g.dil[1],    g.dil[2]};
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, plane));
    parallel_for(g.n * g.c, grain, [&](int64_t b, int64_t e) {
      std::vector<float> rows(static_cast<size_t>(p.h * p.ow));
      for (int64_t pc = b; pc < e; ++pc) {
        const float* xc = x + pc * plane;
        float* y = out + pc * out_plane;
        if (any_nan(xc, plane))
          max_pool_plane_exact(g, xc, y);
        else
          max_pool_plane_2d(p, xc, y, rows.data());
      }
    });
    return;
  }
  if (!RowPhases::fits(g)) {  // rows of no input, or far sparser windows than a CNN's
    parallel_for(g.n * g.c, 1, [&](int64_t b, int64_t e) {
      for (int64_t pc = b; pc < e; ++pc) max_pool_plane_exact(g, x + pc * plane, out + pc * out_plane);
    });
    return;
  }
  const int64_t grain =
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, out_plane * taps));
  parallel_for(g.n * g.c, grain, [&](int64_t b, int64_t e) {
    RowPhases rows(g);
    std::vector<float> acc(static_cast<size_t>(rows.width()));
    std::vector<const float*> reads;
    for (int64_t pc = b; pc < e; ++pc) {
      const float* xc = x + pc * plane;
      float* y = out + pc * out_plane;
      if (rows.load(xc, -std::numeric_limits<float>::infinity())) {  // a NaN: the exact loop
        max_pool_plane_exact(g, xc, y);
        continue;
      }
      for_each_output_row(
          g, 0, g.out[0] * g.out[1], [&](int64_t) { reads.clear(); },
          [&](int64_t, int64_t, int64_t offset) {
            const int64_t row = offset / g.in[2];
            for (int64_t kd = 0; kd < g.kernel[2]; ++kd) reads.push_back(rows.at(row, kd));
          },
          [&](int64_t r) {
            max_rows(acc.data(), reads.data(), static_cast<int64_t>(reads.size()), rows.width());
            std::copy(acc.data(), acc.data() + g.out[2], y + r * g.out[2]);
          });
    }
  });
}

/// max_pool, or with `indices` max_pool_indices: the flat input index (over N, C and the
/// spatial dims, row-major or with storage_order 1 column-major spatial dims) of the first
/// maximum in window order.
template <typename C>
Status max_pool(const Node& node, const HostTensor& in, HostTensor& out, bool indices) {
  const Geometry g = geometry(node, in.meta.shape, out.meta.shape, nullptr);
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  Reader<C> x = reader<C>(in);
  Writer<C> wr = writer<C>(out);
  C lowest = -std::numeric_limits<C>::infinity();
  if constexpr (std::is_integral_v<C>)
    lowest = in.meta.dtype == DType::kI32 ? std::numeric_limits<int32_t>::lowest()
                                          : std::numeric_limits<int64_t>::lowest();
  if constexpr (std::is_same_v<C, float>) {
    if (!indices && in.meta.dtype == DType::kF32 && out.meta.dtype == DType::kF32) {
      max_pool_f32(g, reinterpret_cast<const float*>(in.data.data()),
                   reinterpret_cast<float*>(out.data.data()));
      return {};
    }
  }
  Writer<int64_t> wi = writer<int64_t>(out);
  const bool column_major = node.attrs.window.storage_order == 1;
  for_each_output(g, [&](int64_t n, int64_t c, const std::array<int64_t, 3>& o, int64_t at) {
    C acc = lowest;
    int64_t arg = -1;
    const int64_t base = (n * g.c + c) * plane;
    for_each_tap(g, o, [&](int64_t p, int64_t) {
      const C v = x(base + p);
      bool take = v > acc || arg < 0;
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(acc)) return;
        take = take || std::isnan(v);
      }
      if (!take) return;
      acc = v;
      arg = p;
    });
    if (!indices) {
      wr(at, acc);
      return;
    }
    int64_t flat = std::max<int64_t>(arg, 0);
    if (column_major) {
      const int64_t p2 = flat % g.in[2], p1 = flat / g.in[2] % g.in[1],
                    p0 = flat / (g.in[1] * g.in[2]);
      flat = (p2 * g.in[1] + p1) * g.in[0] + p0;
    }
    wi(at, base + flat);
  });
  return {};
}

Status avg_pool(const Node& node, const HostTensor& in, HostTensor& out) {
  const Geometry g = geometry(node, in.meta.shape, out.meta.shape, nullptr);
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  const bool include_pad = node.attrs.window.count_include_pad;
  Reader<double> x = reader<double>(in);
  Writer<double> wr = writer<double>(out);
  for_each_output(g, [&](int64_t n, int64_t c, const std::array<int64_t, 3>& o, int64_t at) {
    double sum = 0;
    int64_t count = 0;
    const int64_t base = (n * g.c + c) * plane;
    for_each_tap(g, o, [&](int64_t p, int64_t) {
      sum += x(base + p);
      ++count;
    });
    if (include_pad) count = padded_count(g, o);
    wr(at, sum / static_cast<double>(count));
  });
  return {};
}

}  // namespace

Status eval_pool(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  switch (node.op) {
    case OpKind::MaxPool:
    case OpKind::MaxPoolIndices: {
      const bool indices = node.op == OpKind::MaxPoolIndices;
      if (is_floating(ins[0]->meta.dtype)) return max_pool<float>(node, *ins[0], out, indices);
      return max_pool<int64_t>(node, *ins[0], out, indices);
    }
    case OpKind::AvgPool:
      return avg_pool(node, *ins[0], out);
    default:
      break;
  }
  return internal_error(std::string("not a pool: ") + op_name(node.op));
}

}  // namespace kiln::eager
