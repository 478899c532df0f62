// RoiAlign (onnxruntime's semantics, which ONNX's reference follows), in float. For roi r with
// corners (x1, y1, x2, y2) scaled by spatial_scale (minus 0.5 under half_pixel), each output bin
// (ph, pw) of its oh x ow grid takes grid_h x grid_w bilinear samples at the centres of equal
// sub-bins (grid = sampling_ratio, or ceil(roi size / bins) when it is 0). A sample outside
// [-1, H] x [-1, W] counts as 0; one inside is clamped to [0, H - 1] x [0, W - 1] and
// interpolated from its four neighbours with weights w1..w4. avg: the sum of
// w1 v1 + w2 v2 + w3 v3 + w4 v4 over the samples, divided by their count; max: the max over the
// samples of max(w1 v1, w2 v2, w3 v3, w4 v4). Under output_half_pixel a roi is at least 1 x 1.
// The kernel (codegen/lower_roi_align.cpp) does the same float operations in the same order.
#include <algorithm>
#include <cmath>
#include <string>

#include "eager/interpreter_ops.h"

namespace kiln::eager {

Status eval_roi_align(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor& x = *ins[0];
  const HostTensor& rois = *ins[1];
  const HostTensor& batch = *ins[2];
  const Attrs& a = node.attrs;
  const bool max_mode = a.index == 1, half_pixel = a.axis == 0;
  const auto scale = static_cast<float>(a.scalar);
  const int64_t n = x.meta.shape[0], channels = x.meta.shape[1], height = x.meta.shape[2],
                width = x.meta.shape[3];
  const int64_t oh = a.dims[0], ow = a.dims[1], ratio = a.dims[2];
  const int64_t count_rois = rois.meta.shape[0];
  const float offset = half_pixel ? 0.5f : 0.0f;
  for (int64_t r = 0; r < count_rois; ++r) {
    const auto b = static_cast<int64_t>(batch.get(r));
    if (b < 0 || b >= n)
      return invalid_argument(std::string(op_name(node.op)) + ": batch index " + std::to_string(b) +
                              " of roi " + std::to_string(r) + " is outside x's " +
                              std::to_string(n) + " images");
    const float start_w = static_cast<float>(rois.get(r * 4 + 0)) * scale - offset;
    const float start_h = static_cast<float>(rois.get(r * 4 + 1)) * scale - offset;
    const float end_w = static_cast<float>(rois.get(r * 4 + 2)) * scale - offset;
    const float end_h = static_cast<float>(rois.get(r * 4 + 3)) * scale - offset;
    float roi_w = end_w - start_w, roi_h = end_h - start_h;
    if (!half_pixel) roi_w = std::max(roi_w, 1.0f), roi_h = std::max(roi_h, 1.0f);
    const float bin_h = roi_h / static_cast<float>(oh), bin_w = roi_w / static_cast<float>(ow);
    // A NaN or huge roi gives no samples (the kernel's loops bound the grid the same way).
    const auto grid = [&](float size, int64_t bins) -> int64_t {
      if (ratio > 0) return ratio;
      const float g = std::ceil(size / static_cast<float>(bins));
      return g >= 1.0f && g < 1e9f ? static_cast<int64_t>(g) : 0;
    };
    const int64_t grid_h = grid(roi_h, oh), grid_w = grid(roi_w, ow);
    const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t plane = (b * channels + c) * height * width;
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          float acc = 0.0f;
          bool first = true;
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            const float y0 = start_h + static_cast<float>(ph) * bin_h +
                             (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              float y = y0;
              float xx = start_w + static_cast<float>(pw) * bin_w +
                         (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
              float v = 0.0f;
              if (height > 0 && width > 0 &&
                  !(y < -1.0f || y > static_cast<float>(height) || xx < -1.0f ||
                    xx > static_cast<float>(width))) {
                y = std::max(y, 0.0f);
                xx = std::max(xx, 0.0f);
                auto y_lo = static_cast<int64_t>(y), x_lo = static_cast<int64_t>(xx);
                int64_t y_hi = y_lo + 1, x_hi = x_lo + 1;
                if (y_lo >= height - 1) y_hi = y_lo = height - 1, y = static_cast<float>(y_lo);
                if (x_lo >= width - 1) x_hi = x_lo = width - 1, xx = static_cast<float>(x_lo);
                const float ly = y - static_cast<float>(y_lo), lx = xx - static_cast<float>(x_lo);
                const float hy = 1.0f - ly, hx = 1.0f - lx;
                const float v1 = hy * hx * static_cast<float>(x.get(plane + y_lo * width + x_lo));
                const float v2 = hy * lx * static_cast<float>(x.get(plane + y_lo * width + x_hi));
                const float v3 = ly * hx * static_cast<float>(x.get(plane + y_hi * width + x_lo));
                const float v4 = ly * lx * static_cast<float>(x.get(plane + y_hi * width + x_hi));
                v = max_mode ? std::max(std::max(std::max(v1, v2), v3), v4) : v1 + v2 + v3 + v4;
              }
              if (!max_mode) {
                acc += v;
              } else if (first || v > acc) {
                acc = v;
              }
              first = false;
            }
          }
          const int64_t o = ((r * channels + c) * oh + ph) * ow + pw;
          out.set(o, static_cast<double>(max_mode ? acc : acc / count));
        }
    }
  }
  return {};
}

}  // namespace kiln::eager
