// The CPU interpreter's Resize and GridSample (reference semantics; the Vulkan kernel in
// shaders/resample.comp computes the same float operations in the same order):
//   Resize: each output index q of an axis maps to an input coordinate x (float arithmetic):
//     half_pixel (q + 0.5) / s - 0.5; pytorch_half_pixel the same, 0 where len = 1;
//     align_corners q * (in - 1) / (len - 1), 0 where len = 1; asymmetric q / s;
//     tf_half_pixel_for_nn (q + 0.5) / s; tf_crop_and_resize r0 * (in - 1) + q * (r1 - r0) *
//     (in - 1) / (out - 1), or 0.5 * (r0 + r1) * (in - 1) for an output size 1, and an output
//     element with x outside [0, in - 1] on any axis is the extrapolation value. s is the
//     axis' scale attribute, or out / in when it is 0; len is in * s for a scale attribute
//     (unfloored, as ONNX's reference), else out. An axis kept by its size (-1) whose scale
//     is 0 or 1 (not a tf_* mode) maps q to q.
//     With f = floor(x), t = x - f, j = f as an integer, the taps of an axis are: nearest one,
//     j (+1 if t > 0.5 round_prefer_floor, t >= 0.5 round_prefer_ceil, t > 0 ceil); linear
//     j, j + 1 with weights 1 - t, t; cubic j - 1 .. j + 2 with Keys' coefficients for
//     cubic_a (exclude_outside: taps outside the input get 0, the rest divided by their sum).
//     Tap indices clamp into [0, in - 1] (edge padding). The output is the float sum, in
//     row-major tap order from 0, of (product of the axes' weights, first axis first) * value;
//     nearest copies the value (integers too). f16 rounds once, at the store.
//   GridSample (PyTorch's grid_sample): grid[n, h, w] = (gx, gy) in [-1, 1] unnormalised to
//     ((g + 1) / 2) * (size - 1) with align_corners, else ((g + 1) * size - 1) / 2; border
//     clamps the coordinate into [0, size - 1], reflection reflects it about the edges
//     (about -0.5 and size - 0.5 without align_corners) then clamps; bilinear weighs the four
//     neighbours, nearest rounds half to even, bicubic takes 4 x 4 taps with A = -0.75, each
//     tap coordinate mapped by the padding mode; taps outside the input read 0.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "eager/interpreter_ops.h"

namespace kiln::eager {
namespace {

/// Input coordinate of output index q on one axis (shaders/resample.comp kiln_coord).
float resize_coord(ResizeCoord mode, float q, float scale, float in, float len, float out, float r0,
                   float r1) {
  switch (mode) {
    case ResizeCoord::kHalfPixel:
      return (q + 0.5f) / scale - 0.5f;
    case ResizeCoord::kPytorchHalfPixel:
      return len > 1.0f ? (q + 0.5f) / scale - 0.5f : 0.0f;
    case ResizeCoord::kAlignCorners:
      return len == 1.0f ? 0.0f : q * (in - 1.0f) / (len - 1.0f);
    case ResizeCoord::kAsymmetric:
      return q / scale;
    case ResizeCoord::kTfHalfPixelForNn:
      return (q + 0.5f) / scale;
    case ResizeCoord::kTfCropAndResize:
      return out > 1.0f ? r0 * (in - 1.0f) + q * (r1 - r0) * (in - 1.0f) / (out - 1.0f)
                        : 0.5f * (r0 + r1) * (in - 1.0f);
  }
  return 0.0f;
}

/// Keys' cubic convolution coefficients of the taps j - 1 .. j + 2 at fraction t.
void cubic_coeffs(float a, float t, float c[4]) {
  const float t1 = t + 1.0f, u = 1.0f - t, u1 = 2.0f - t;
  c[0] = ((a * t1 - 5.0f * a) * t1 + 8.0f * a) * t1 - 4.0f * a;
  c[1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  c[2] = ((a + 2.0f) * u - (a + 3.0f)) * u * u + 1.0f;
  c[3] = ((a * u1 - 5.0f * a) * u1 + 8.0f * a) * u1 - 4.0f * a;
}

/// The taps of one axis (shaders/resample.comp kiln_taps); returns their count.
int resize_taps(const Attrs::Resample& r, float x, int64_t len, int64_t idx[4], float w[4]) {
  const float f = std::floor(x), t = x - f;
  const auto j = static_cast<int64_t>(std::clamp(f, -4.0f, static_cast<float>(len) + 4.0f));
  auto clampi = [&](int64_t i) { return std::clamp<int64_t>(i, 0, len - 1); };
  if (r.mode == kResampleNearest) {
    int64_t k = j;
    switch (static_cast<NearestMode>(r.nearest)) {
      case NearestMode::kRoundPreferFloor:
        k += t > 0.5f ? 1 : 0;
        break;
      case NearestMode::kRoundPreferCeil:
        k += t >= 0.5f ? 1 : 0;
        break;
      case NearestMode::kFloor:
        break;
      case NearestMode::kCeil:
        k += t > 0.0f ? 1 : 0;
        break;
    }
    idx[0] = clampi(k);
    w[0] = 1.0f;
    return 1;
  }
  if (r.mode == kResampleLinear) {
    idx[0] = clampi(j);
    idx[1] = clampi(j + 1);
    w[0] = 1.0f - t;
    w[1] = t;
    return 2;
  }
  cubic_coeffs(static_cast<float>(r.cubic_a), t, w);
  for (int k = 0; k < 4; ++k) idx[k] = clampi(j - 1 + k);
  if (r.exclude_outside) {
    for (int k = 0; k < 4; ++k)
      if (j - 1 + k < 0 || j - 1 + k >= len) w[k] = 0.0f;
    const float sum = w[0] + w[1] + w[2] + w[3];
    for (int k = 0; k < 4; ++k) w[k] = w[k] / sum;
  }
  return 4;
}

template <typename C>
Status resize(const Node& node, const HostTensor& in, HostTensor& out) {
  const Attrs::Resample& r = node.attrs.resample;
  const Shape& is = in.meta.shape;
  const Shape& os = out.meta.shape;
  const size_t rank = is.size();
  const auto coord = static_cast<ResizeCoord>(r.coord);
  const bool crop = coord == ResizeCoord::kTfCropAndResize;
  std::vector<bool> identity(rank);
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t a = rank; a-- > 1;) in_strides[a - 1] = in_strides[a] * is[a];
  for (size_t a = 0; a < rank; ++a)
    identity[a] = node.attrs.dims[a] < 0 && (r.scales[a] == 0.0 || r.scales[a] == 1.0) && !crop &&
                  coord != ResizeCoord::kTfHalfPixelForNn;
  Reader<C> x = reader<C>(in);
  Writer<C> wr = writer<C>(out);
  const int64_t total = out.meta.numel();
  std::vector<int64_t> q(rank);
  std::vector<std::array<int64_t, 4>> idx(rank);
  std::vector<std::array<float, 4>> w(rank);
  std::vector<int> taps(rank);
  for (int64_t o = 0; o < total; ++o) {
    int64_t rest = o;
    for (size_t a = rank; a-- > 0;) {
      q[a] = rest % os[a];
      rest /= os[a];
    }
    bool outside = false;
    for (size_t a = 0; a < rank; ++a) {
      if (identity[a]) {
        idx[a][0] = q[a];
        w[a][0] = 1.0f;
        taps[a] = 1;
        continue;
      }
      const float fin = static_cast<float>(is[a]), fout = static_cast<float>(os[a]);
      const float scale = r.scales[a] != 0.0 ? static_cast<float>(r.scales[a]) : fout / fin;
      const float r0 = crop ? static_cast<float>(r.roi[a]) : 0.0f;
      const float r1 = crop ? static_cast<float>(r.roi[rank + a]) : 0.0f;
      const float len = r.scales[a] != 0.0 ? fin * scale : fout;
      const float xa = resize_coord(coord, static_cast<float>(q[a]), scale, fin, len, fout, r0, r1);
      if (crop && (xa < 0.0f || xa > fin - 1.0f)) outside = true;
      taps[a] = resize_taps(r, xa, is[a], idx[a].data(), w[a].data());
    }
    if (outside) {
      wr(o, static_cast<C>(r.extrapolation));
      continue;
    }
    if (r.mode == kResampleNearest) {
      int64_t off = 0;
      for (size_t a = 0; a < rank; ++a) off += idx[a][0] * in_strides[a];
      wr(o, x(off));
      continue;
    }
    // Row-major over the taps of every axis.
    float acc = 0.0f;
    std::vector<int> k(rank, 0);
    while (true) {
      float weight = w[0][static_cast<size_t>(k[0])];
      int64_t off = idx[0][static_cast<size_t>(k[0])] * in_strides[0];
      for (size_t a = 1; a < rank; ++a) {
        weight = weight * w[a][static_cast<size_t>(k[a])];
        off += idx[a][static_cast<size_t>(k[a])] * in_strides[a];
      }
      acc = acc + weight * static_cast<float>(x(off));
      size_t a = rank;
      while (a > 0 && ++k[a - 1] == taps[a - 1]) k[--a] = 0;
      if (a == 0) break;
    }
    wr(o, static_cast<C>(acc));
  }
  return {};
}

// ---- GridSample ---------------------------------------------------------------------------

float grid_unnormalize(float g, float size, bool align) {
  return align ? ((g + 1.0f) / 2.0f) * (size - 1.0f) : ((g + 1.0f) * size - 1.0f) / 2.0f;
}

/// PyTorch's reflect_coordinates over [lo2 / 2, hi2 / 2] (the remainder as x - span * floor,
/// as the kernel computes it).
float grid_reflect(float x, float lo2, float hi2) {
  if (lo2 == hi2) return 0.0f;
  const float mn = lo2 / 2.0f, span = (hi2 - lo2) / 2.0f;
  const float ax = std::fabs(x - mn);
  const float flips = std::floor(ax / span);
  const float extra = ax - span * flips;
  const float parity = flips - 2.0f * std::floor(flips / 2.0f);
  return parity == 0.0f ? extra + mn : span - extra + mn;
}

/// x clamped into [lo, hi], NaN kept.
float clampf(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/// The padding mode applied to a coordinate (PyTorch's compute_coordinates).
float grid_pad(float x, float size, int64_t padding, bool align) {
  if (padding == 1) return clampf(x, 0.0f, size - 1.0f);
  if (padding == 2) {
    x = align ? grid_reflect(x, 0.0f, 2.0f * (size - 1.0f))
              : grid_reflect(x, -1.0f, 2.0f * size - 1.0f);
    return clampf(x, 0.0f, size - 1.0f);
  }
  return x;
}

Status grid_sample(const Node& node, const HostTensor& in, const HostTensor& grid,
                   HostTensor& out) {
  const Attrs::Resample& r = node.attrs.resample;
  const int64_t n_ = in.meta.shape[0], c_ = in.meta.shape[1], h_ = in.meta.shape[2],
                w_ = in.meta.shape[3];
  const int64_t ho = out.meta.shape[2], wo = out.meta.shape[3];
  const float fh = static_cast<float>(h_), fw = static_cast<float>(w_);
  Reader<float> x = reader<float>(in), g = reader<float>(grid);
  Writer<float> wr = writer<float>(out);
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t c = 0; c < c_; ++c) {
      const int64_t plane = (n * c_ + c) * h_ * w_;
      // A tap at float position (yy, xx): 0 outside the input.
      auto read = [&](float yy, float xx) {
        if (!(xx >= 0.0f && xx <= fw - 1.0f && yy >= 0.0f && yy <= fh - 1.0f)) return 0.0f;
        return x(plane + static_cast<int64_t>(yy) * w_ + static_cast<int64_t>(xx));
      };
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          const int64_t gi = ((n * ho + i) * wo + j) * 2;
          float ix = grid_unnormalize(g(gi), fw, r.align_corners);
          float iy = grid_unnormalize(g(gi + 1), fh, r.align_corners);
          float v = 0.0f;
          if (r.mode == kResampleCubic) {
            const float x0 = std::floor(ix), y0 = std::floor(iy);
            float cx[4], cy[4];
            cubic_coeffs(-0.75f, ix - x0, cx);
            cubic_coeffs(-0.75f, iy - y0, cy);
            for (int a = 0; a < 4; ++a) {
              const float yy =
                  grid_pad(y0 - 1.0f + static_cast<float>(a), fh, r.padding, r.align_corners);
              float row = 0.0f;
              for (int b = 0; b < 4; ++b) {
                const float xx =
                    grid_pad(x0 - 1.0f + static_cast<float>(b), fw, r.padding, r.align_corners);
                row = row + read(yy, xx) * cx[b];
              }
              v = v + row * cy[a];
            }
          } else {
            ix = grid_pad(ix, fw, r.padding, r.align_corners);
            iy = grid_pad(iy, fh, r.padding, r.align_corners);
            if (r.mode == kResampleNearest) {
              v = read(std::nearbyint(iy), std::nearbyint(ix));
            } else {
              const float x0 = std::floor(ix), y0 = std::floor(iy);
              const float x1 = x0 + 1.0f, y1 = y0 + 1.0f;
              v = read(y0, x0) * ((x1 - ix) * (y1 - iy));
              v = v + read(y0, x1) * ((ix - x0) * (y1 - iy));
              v = v + read(y1, x0) * ((x1 - ix) * (iy - y0));
              v = v + read(y1, x1) * ((ix - x0) * (iy - y0));
            }
          }
          wr(((n * c_ + c) * ho + i) * wo + j, v);
        }
    }
  return {};
}

}  // namespace

Status eval_resample(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  if (node.op == OpKind::GridSample) return grid_sample(node, *ins[0], *ins[1], out);
  if (is_floating(out.meta.dtype)) return resize<float>(node, *ins[0], out);
  return resize<int64_t>(node, *ins[0], out);
}

}  // namespace kiln::eager
