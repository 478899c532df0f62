// The CPU interpreter's kernels for the Window ops and GatherND (reference semantics, ONNX's):
//   Conv: out[n, co, o..] = bias[co] + sum over ci < C / groups and the window of
//     x[n, g * C / groups + ci, o * stride - pad_begin + k * dilation] * w[co, ci, k..], with
//     g = co / (C_out / groups); positions in the padding contribute nothing. Computed in f32
//     (f16 operands converted exactly) as one sgemm per group over an im2col matrix (window
//     positions x output positions, zeros for the padding; of one image, or of several side by
//     side when they fit in 16 MiB): float sums in OpenBLAS's
//     order starting from the bias, rounded to the output dtype (docs/ops.md). A conv whose
//     groups each read one input channel (depthwise) sums directly: the bias, then each tap
//     in row-major window order, in float.
//   MaxPool, MaxPoolIndices, AvgPool: interpreter_pool.cpp.
//   GatherND: data[batch.., indices[i.., 0..m), rest..]; an index in [-size, 0) counts from the
//     end, one outside [-size, size) is an error Status naming it.
// Spatial dims are handled as three, missing ones having size 1 and a trivial window.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "eager/channels_last.h"
#include "eager/conv_depthwise.h"
#include "eager/conv_direct.h"
#include "eager/elementwise_loops.h"
#include "eager/gemm.h"
#include "eager/interpreter_chain.h"
#include "eager/interpreter_ops.h"
#include "eager/phase_planes.h"
#include "eager/vector_loops.h"
#include "eager/window_geometry.h"

namespace kiln::eager {
namespace {

/// im2col floats per sgemm at most (16 MiB); a larger image is done in chunks of output rows.
constexpr int64_t kMaxColumns = int64_t{1} << 22;

/// The row stride of an im2col matrix (and of a product buffer) of `cols` columns (unaliased(),
/// phase_planes.h): the 64 x 2048 x 576 product of a 32x32 conv on two images ran 5-15% faster
/// with 16 floats more per row (docs/perf.md). The product's values do not depend on it.
int64_t padded_ld(int64_t cols) {
  return cols >= 64 ? unaliased(cols) : cols;
}

/// Output rows up to this wide are copied by inline loops in im2col (the small maps of a CNN's
/// last stages: 2x2 to 16x16).
constexpr int64_t kShortRow = 16;

/// For each pair of outer taps (ka, kb) and output row r of [r0, r1) (computed once per im2col,
/// not per channel): where the input row it reads starts within a plane, or -1 in the padding;
/// with `padded`, within a plane with its padding written out ([in + pad + pad_end] per dim),
/// where every row it reads lies.
std::vector<int64_t> row_starts(const Geometry& g, int64_t r0, int64_t r1, bool padded) {
  std::array<int64_t, 3> dims{}, shift{};
  for (size_t i = 0; i < 3; ++i) {
    dims[i] = padded ? g.in[i] + g.pad[i] + g.pad_end[i] : g.in[i];
    shift[i] = padded ? 0 : g.pad[i];
  }
  std::vector<int64_t> start;
  start.reserve(static_cast<size_t>(g.kernel[0] * g.kernel[1] * (r1 - r0)));
  for (int64_t ka = 0; ka < g.kernel[0]; ++ka)
    for (int64_t kb = 0; kb < g.kernel[1]; ++kb)
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t p0 = (r / g.out[1]) * g.stride[0] - shift[0] + ka * g.dil[0];
        const int64_t p1 = (r % g.out[1]) * g.stride[1] - shift[1] + kb * g.dil[1];
        const bool inside = p0 >= 0 && p0 < dims[0] && p1 >= 0 && p1 < dims[1];
        start.push_back(inside ? (p0 * dims[1] + p1) * dims[2] : -1);
      }
  return start;
}

/// What im2col needs per call, the same for every channel: row_starts and the innermost taps'
/// shifts and column ranges.
struct Im2colRows {
  Im2colRows(const Geometry& g, int64_t r0, int64_t r1)
      : count(r1 - r0), start(row_starts(g, r0, r1, false)), inner(g) {}
  int64_t count;               // output rows
  std::vector<int64_t> start;  // [ka, kb, row]
  InnerTaps inner;
};

/// im2col for one channel `xc`: row t (a window tap) of `dst`, at dst + t * ld, gets for each
/// output position of the output rows `rows` covers (a row: fixed positions in the two outer
/// spatial dims, all of the innermost) the input value tap t reads there, or 0 in the padding.
void im2col_channel(const Geometry& g, const Im2colRows& rows, const float* xc, float* dst,
                    int64_t ld) {
  const int64_t w = g.out[2], s2 = g.stride[2];
  const int64_t* start = rows.start.data();
  for (int64_t outer = 0; outer < g.kernel[0] * g.kernel[1]; ++outer, start += rows.count) {
    for (size_t kd = 0; kd < rows.inner.shift.size(); ++kd, dst += ld) {
      const int64_t lo = rows.inner.lo[kd], hi = rows.inner.hi[kd];
      const int64_t shift = rows.inner.shift[kd] + lo * s2;
      for (int64_t i = 0; i < rows.count; ++i) {
        float* row = dst + i * w;
        if (start[i] < 0) {
          std::fill(row, row + w, 0.0f);
          continue;
        }
        std::fill(row, row + lo, 0.0f);
        // The first input read as an offset (a pointer to it may lie before the plane when no
        // column is inside).
        if (hi > lo) copy_strided(row + lo, xc + (start[i] + shift), hi - lo, s2);
        std::fill(row + hi, row + w, 0.0f);
      }
    }
  }
}

/// A conv's input plane with its zero padding written out ([in + pad + pad_end] per spatial
/// dim), so that every tap of every output reads inside it: im2col of short output rows then
/// copies a fixed count per row, with no per-row column ranges (whose varying loop counts cost
/// more than the copies on the small maps of a CNN's last stages).
struct PaddedPlane {
  explicit PaddedPlane(const Geometry& g) {
    for (size_t i = 0; i < 3; ++i) dims[i] = g.in[i] + g.pad[i] + g.pad_end[i];
    data.assign(static_cast<size_t>(dims[0] * dims[1] * dims[2]), 0.0f);
  }
  /// Whether the layout suits `g`: an input with elements, every window inside the padded
  /// input (true for convs, whose output size follows from it), and a padded plane of at most
  /// a few times the input's floats (padding far wider than a CNN's would make it huge).
  static bool fits(const Geometry& g) {
    double padded = 1, input = 1;
    for (size_t i = 0; i < 3; ++i) {
      if (g.in[i] == 0) return false;
      if (g.out[i] > 0 && (g.out[i] - 1) * g.stride[i] + (g.kernel[i] - 1) * g.dil[i] >=
                              g.in[i] + g.pad[i] + g.pad_end[i])
        return false;
      padded *= static_cast<double>(g.in[i] + g.pad[i] + g.pad_end[i]);
      input *= static_cast<double>(g.in[i]);
    }
    return padded <= 4.0 * input + 4096.0;
  }
  /// Copies one input plane into the interior (the border stays zero).
  void load(const Geometry& g, const float* xc) {
    for (int64_t a = 0; a < g.in[0]; ++a)
      for (int64_t b = 0; b < g.in[1]; ++b)
        std::memcpy(data.data() + ((a + g.pad[0]) * dims[1] + b + g.pad[1]) * dims[2] + g.pad[2],
                    xc + (a * g.in[1] + b) * g.in[2], static_cast<size_t>(g.in[2]) * sizeof(float));
  }
  std::array<int64_t, 3> dims{};
  std::vector<float> data;
};

/// im2col_channel for output rows up to kShortRow wide, from the padded plane: every row a copy
/// of the same count.
void im2col_channel_short(const Geometry& g, const PaddedPlane& p, const int64_t* start,
                          int64_t rows, float* dst, int64_t ld) {
  const int64_t w = g.out[2], s2 = g.stride[2];
  const float* plane = p.data.data();
  for (int64_t outer = 0; outer < g.kernel[0] * g.kernel[1]; ++outer, start += rows)
    for (int64_t kd = 0; kd < g.kernel[2]; ++kd, dst += ld)
      for (int64_t i = 0; i < rows; ++i) {
        const float* src = plane + start[i] + kd * g.dil[2];
        float* row = dst + i * w;
        for (int64_t j = 0; j < w; ++j) row[j] = src[j * s2];
      }
}

/// im2col of `channels` channels of one image `x` for the output rows [r0, r1): channel ci's
/// taps are the rows ci * taps .. of `col`, each `ld` floats apart.
void im2col(const Geometry& g, int64_t channels, const float* x, int64_t r0, int64_t r1, float* col,
            int64_t ld) {
  const int64_t plane = g.in[0] * g.in[1] * g.in[2], cols = (r1 - r0) * g.out[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, taps * cols));
  // Channels fill disjoint parts of `col`, split over the cores.
  if (g.out[2] <= kShortRow && PaddedPlane::fits(g)) {
    const std::vector<int64_t> start = row_starts(g, r0, r1, true);
    parallel_for(channels, grain, [&](int64_t c0, int64_t c1) {
      PaddedPlane padded(g);
      for (int64_t ci = c0; ci < c1; ++ci) {
        padded.load(g, x + ci * plane);
        im2col_channel_short(g, padded, start.data(), r1 - r0, col + ci * taps * ld, ld);
      }
    });
    return;
  }
  const Im2colRows rows(g, r0, r1);
  parallel_for(channels, grain, [&](int64_t c0, int64_t c1) {
    for (int64_t ci = c0; ci < c1; ++ci)
      im2col_channel(g, rows, x + ci * plane, col + ci * taps * ld, ld);
  });
}

/// One output channel per input channel (depthwise convs, with any channel multiplier):
/// y[co] = bias + sum over the window taps in row-major order of w * x[co / multiplier],
/// accumulated in float per output position, planes split over the cores. One output row at a
/// time (it stays in L1 while every tap adds to it), with the taps' column ranges computed once
/// per conv: the small planes of mobile networks (4x4, 2x2) spent most of their time on loop
/// bounds recomputed per tap and channel.
void conv_per_channel(const Geometry& g, const float* x, const float* w, const float* bias,
                      float* y, const OutputRuns& finish) {
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t multiplier = g.c_out / g.c;
  const int64_t s2 = g.stride[2];
  const InnerTaps inner(g);
  const int64_t grain =
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, out_plane * taps));
  parallel_for(g.n * g.c_out, grain, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const int64_t n = nc / g.c_out, co = nc % g.c_out;
      const float* xc = x + (n * g.c + co / multiplier) * plane;
      const float* wc = w + co * taps;
      float* yc = y + nc * out_plane;
      const float init = bias ? bias[co] : 0.0f;
      for_each_output_row(
          g, [&](int64_t r) { std::fill(yc + r * g.out[2], yc + (r + 1) * g.out[2], init); },
          [&](int64_t r, int64_t t, int64_t offset) {
            float* __restrict yr = yc + r * g.out[2];
            const float* wt = wc + t * g.kernel[2];
            for (size_t kd = 0; kd < inner.shift.size(); ++kd) {
              const float wv = wt[kd];
              // The first input read, as an offset first (offset + shift may lie before the
              // plane: a tap in the padding).
              if (inner.hi[kd] <= inner.lo[kd]) continue;
              const int64_t first = offset + inner.shift[kd] + inner.lo[kd] * s2;
              madd_strided(yr + inner.lo[kd], wv, xc + first, inner.hi[kd] - inner.lo[kd], s2);
            }
          });
    }
    if (finish) finish(y + b * out_plane, (e - b) * out_plane);
  });
}

/// Conv of several images at once (`batch` at a time): per group, their im2col matrices side by
/// side in one matrix of batch * out_plane columns, one product with the group's weights (packed
/// once for the images, and a wider product for small images), then each image's rows copied
/// to its place in y. Each output is the same sum as with one product per image.
void conv_images_together(const Geometry& g, int64_t groups, int64_t batch, const float* x,
                          const float* w, const float* bias, float* y, const OutputRuns& finish) {
  const int64_t cg = g.c / groups, og = g.c_out / groups;
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t rows = g.out[0] * g.out[1], out_plane = rows * g.out[2];
  const int64_t depth = cg * g.kernel[0] * g.kernel[1] * g.kernel[2];
  ScratchFloats col, prod;
  // One row stride for every batch, from the widest (a last, narrower batch keeps it: its own
  // padded stride could exceed the buffer's).
  const int64_t ld = padded_ld(batch * out_plane);
  col.reserve(static_cast<size_t>(depth * ld));
  prod.reserve(static_cast<size_t>(og * ld));
  for (int64_t n0 = 0; n0 < g.n; n0 += batch) {
    const int64_t nb = std::min(batch, g.n - n0), width = nb * out_plane;
    for (int64_t grp = 0; grp < groups; ++grp) {
      for (int64_t i = 0; i < nb; ++i)
        im2col(g, cg, x + ((n0 + i) * g.c + grp * cg) * plane, 0, rows, col.data + i * out_plane,
               ld);
      if (bias)
        for (int64_t o = 0; o < og; ++o)
          std::fill(prod.data + o * ld, prod.data + o * ld + width, bias[grp * og + o]);
      sgemm(og, width, depth, {w + grp * og * depth, depth, false}, {col.data, ld, false},
            bias ? 1.0f : 0.0f, prod.data, ld);
      for (int64_t i = 0; i < nb; ++i) {
        float* yi = y + ((n0 + i) * g.c_out + grp * og) * out_plane;
        for (int64_t o = 0; o < og; ++o) {
          const float* src = prod.data + o * ld + i * out_plane;
          std::copy(src, src + out_plane, yi + o * out_plane);
        }
        if (finish) finish(yi, og * out_plane);  // the group's planes of image i: one run
      }
    }
  }
}

/// Conv, and with `relu` a Relu over its outputs or with `post` that function of them, f32 only
/// (the caller's check), while they are in cache.
Status conv(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out, bool relu,
            const OutputRuns& post) {
  const Geometry g = geometry(node, ins[0]->meta.shape, out.meta.shape, &ins[1]->meta.shape);
  const int64_t groups = node.attrs.window.groups;
  const int64_t cg = g.c / groups, og = g.c_out / groups;
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t rows = g.out[0] * g.out[1], out_plane = rows * g.out[2], depth = cg * taps;
  std::vector<float> sx, sw, sbias, so;
  ScratchFloats col;
  const float* x = as_floats(*ins[0], sx);
  const float* w = as_floats(*ins[1], sw);
  const float* bias = ins.size() == 3 ? as_floats(*ins[2], sbias) : nullptr;
  float* y = float_result(out, so);
  OutputRuns finish;  // what runs over outputs once written: the Relu, or `post`
  if (relu)
    finish = [](float* p, int64_t n) { relu_in_place(p, n); };
  else
    finish = post;
  if (cg == 1 && g.c > 0 && out.meta.numel() > 0) {  // depthwise: one input channel per output
    if (g.c_out == g.c && prefer_channels_last(g, false)) {
      depthwise_conv_channels_last(g, x, w, bias, y);
      if (finish)
        parallel_for(out.meta.numel(), kParallelGrain,
                     [&](int64_t b, int64_t e) { finish(y + b, e - b); });
    } else if (depthwise_direct_applies(g)) {
      depthwise_direct(g, x, w, bias, y, finish);
    } else {
      conv_per_channel(g, x, w, bias, y, finish);
    }
    store_floats(out, so);
    return {};
  }
  if (conv_direct_applies(g)) {  // on AVX-512: no im2col, nothing packed
    conv_direct(g, groups, x, w, bias, y, relu, relu ? OutputRuns{} : post);
    store_floats(out, so);
    return {};
  }
  // A 1x1 window with unit strides and no padding reads the input planes as they are.
  bool direct = taps == 1;
  for (size_t i = 0; i < 3; ++i)
    direct = direct && g.stride[i] == 1 && g.pad[i] == 0 && g.in[i] == g.out[i];
  // Images whose im2col matrices fit kMaxColumns together go through one product per group
  // (not the direct 1x1 convs, which would copy their input for it: slower here).
  const int64_t per_image = depth * out_plane;
  const int64_t batch = per_image == 0 ? 1 : std::min<int64_t>(g.n, kMaxColumns / per_image);
  if (batch > 1 && out.meta.numel() > 0 && !direct) {
    conv_images_together(g, groups, batch, x, w, bias, y, finish);
    store_floats(out, so);
    return {};
  }
  const int64_t chunk =
      g.out[2] == 0 ? rows
                    : std::max<int64_t>(1, kMaxColumns / std::max<int64_t>(1, depth) / g.out[2]);
  // One row stride for every chunk, from the widest (a last, narrower chunk keeps it).
  const int64_t col_ld = padded_ld(std::min(chunk, rows) * g.out[2]);
  if (!direct && out.meta.numel() > 0) col.reserve(static_cast<size_t>(depth * col_ld));
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t grp = 0; grp < groups; ++grp) {
      const float* xg = x + (n * g.c + grp * cg) * plane;
      const float* wg = w + grp * og * depth;
      float* yg = y + (n * g.c_out + grp * og) * out_plane;
      if (bias)
        for (int64_t o = 0; o < og; ++o)
          std::fill(yg + o * out_plane, yg + (o + 1) * out_plane, bias[grp * og + o]);
      const float beta = bias ? 1.0f : 0.0f;
      if (direct) {
        sgemm(og, out_plane, depth, {wg, depth, false}, {xg, plane, false}, beta, yg, out_plane);
        if (finish) finish(yg, og * out_plane);
        continue;
      }
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t r1 = std::min(rows, r0 + chunk), cols = (r1 - r0) * g.out[2];
        if (cols == 0) continue;
        im2col(g, cg, xg, r0, r1, col.data, col_ld);
        sgemm(og, cols, depth, {wg, depth, false}, {col.data, col_ld, false}, beta,
              yg + r0 * g.out[2], out_plane);
        if (finish && cols == out_plane)  // every row in one chunk: the planes are one run
          finish(yg, og * out_plane);
        else if (finish)
          for (int64_t o = 0; o < og; ++o) finish(yg + o * out_plane + r0 * g.out[2], cols);
      }
    }
  }
  store_floats(out, so);
  return {};
}

Status gather_nd(const Node& node, const HostTensor& data, const HostTensor& idx, HostTensor& out) {
  const Shape& ds = data.meta.shape;
  const Shape& is = idx.meta.shape;
  const size_t b = static_cast<size_t>(node.attrs.index), m = static_cast<size_t>(is.back());
  int64_t batch = 1, rows = 1, slice = 1;  // rows: index tuples per batch element
  for (size_t i = 0; i < b; ++i) batch *= ds[i];
  for (size_t i = b; i + 1 < is.size(); ++i) rows *= is[i];
  for (size_t i = b + m; i < ds.size(); ++i) slice *= ds[i];
  int64_t per_batch = slice;  // data elements per batch element
  for (size_t i = b; i < b + m; ++i) per_batch *= ds[i];
  const size_t es = dtype_size(data.meta.dtype);
  Reader<int64_t> ix = reader<int64_t>(idx);
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t r = 0; r < rows; ++r) {
      int64_t off = 0;
      for (size_t j = 0; j < m; ++j) {
        const int64_t size = ds[b + j];
        int64_t v = ix((bi * rows + r) * static_cast<int64_t>(m) + static_cast<int64_t>(j));
        if (v < -size || v >= size)
          return invalid_argument("gather_nd: index " + std::to_string(v) + " is out of range [" +
                                  std::to_string(-size) + ", " + std::to_string(size) +
                                  ") for data dim " + std::to_string(b + j));
        off = off * size + (v < 0 ? v + size : v);
      }
      const int64_t src = bi * per_batch + off * slice, dst = (bi * rows + r) * slice;
      if (slice > 0)
        std::memcpy(out.data.data() + static_cast<size_t>(dst) * es,
                    data.data.data() + static_cast<size_t>(src) * es,
                    static_cast<size_t>(slice) * es);
    }
  }
  return {};
}

}  // namespace

bool is_window_kernel(OpKind op) {
  return op_category(op) == OpCategory::kWindow || op == OpKind::GatherND;
}

Status eval_window(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  switch (node.op) {
    case OpKind::Conv:
      return conv(node, ins, out, false, {});
    case OpKind::MaxPool:
    case OpKind::MaxPoolIndices:
    case OpKind::AvgPool:
      return eval_pool(node, ins, out);
    case OpKind::GatherND:
      return gather_nd(node, *ins[0], *ins[1], out);
    case OpKind::Resize:
    case OpKind::GridSample:
      return eval_resample(node, ins, out);
    case OpKind::ConvTranspose:
      return conv_transpose(node, ins, out);
    default:
      break;
  }
  return internal_error(std::string("not a window op: ") + op_name(node.op));
}

Status eval_conv_relu(const Node& conv_node, std::span<const HostTensor* const> ins,
                      HostTensor& out) {
  if (conv_node.op != OpKind::Conv || out.meta.dtype != DType::kF32)
    return internal_error("eval_conv_relu: not an f32 Conv");
  return conv(conv_node, ins, out, true, {});
}

Status eval_conv_then(const Node& conv_node, std::span<const HostTensor* const> ins,
                      HostTensor& out, const PointwiseChain& chain) {
  if (conv_node.op != OpKind::Conv || out.meta.dtype != DType::kF32)
    return internal_error("eval_conv_then: not an f32 Conv");
  KILN_RETURN_IF_ERROR(conv(conv_node, ins, out, false,
                            [&chain](float* p, int64_t n) { chain.apply(p, n); }));
  return chain.status();
}

}  // namespace kiln::eager
