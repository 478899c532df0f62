// Shape and dtype rules of Resize (ONNX Resize / Upsample over any axes) and GridSample (ONNX
// GridSample over NCHW; its rule written once over symbolic sizes, graph/shape_rule.h), and
// their attributes' printed form.
#include <cmath>
#include <cstdio>
#include <string>

#include "graph/shape_rule.h"

namespace kiln::detail {
namespace {

const char* resample_mode_name(OpKind op, int64_t mode) {
  if (op == OpKind::GridSample)
    return mode == kResampleNearest ? "nearest" : mode == kResampleLinear ? "bilinear" : "bicubic";
  return mode == kResampleNearest ? "nearest" : mode == kResampleLinear ? "linear" : "cubic";
}

const char* coord_name(int64_t c) {
  static const char* const names[] = {"half_pixel", "pytorch_half_pixel",   "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  return c >= 0 && c < 6 ? names[c] : "?";
}

const char* nearest_name(int64_t n) {
  static const char* const names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  return n >= 0 && n < 4 ? names[n] : "?";
}

std::string doubles_str(const std::vector<double>& v) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", v[i]);
    s += (i ? ", " : "") + std::string(buf);
  }
  return s + "]";
}

Expected<TensorMeta> resize_meta(OpKind op, std::span<const TensorMeta> ins, const Attrs& at) {
  const TensorMeta& x = ins[0];
  const Attrs::Resample& r = at.resample;
  const auto rank = static_cast<size_t>(x.rank());
  if (rank == 0) return op_error(op, ins, "needs a tensor of rank >= 1");
  if (r.mode < kResampleNearest || r.mode > kResampleCubic)
    return op_error(op, ins, "mode " + std::to_string(r.mode) + " is not nearest, linear or cubic");
  if (r.coord < 0 || r.coord > static_cast<int64_t>(ResizeCoord::kTfCropAndResize))
    return op_error(op, ins, "bad coordinate transformation " + std::to_string(r.coord));
  if (r.nearest < 0 || r.nearest > static_cast<int64_t>(NearestMode::kCeil))
    return op_error(op, ins, "bad nearest mode " + std::to_string(r.nearest));
  if (x.dtype == DType::kBool) return op_error(op, ins, "not defined for bool tensors");
  if (r.mode != kResampleNearest && !is_floating(x.dtype))
    return op_error(op, ins,
                    std::string(resample_mode_name(op, r.mode)) +
                        " needs a floating-point input (nearest takes integers)");
  if (at.dims.size() != rank)
    return op_error(op, ins, "sizes " + shape_str(at.dims) + " must have one entry per axis");
  if (r.scales.size() != rank)
    return op_error(op, ins, "scales " + doubles_str(r.scales) + " must have one entry per axis");
  for (double s : r.scales)
    if (!std::isfinite(s) || s < 0)
      return op_error(op, ins, "scales " + doubles_str(r.scales) + " must be finite and >= 0");
  const bool crop = r.coord == static_cast<int64_t>(ResizeCoord::kTfCropAndResize);
  if (crop && r.roi.size() != 2 * rank)
    return op_error(op, ins,
                    "tf_crop_and_resize needs a roi of " + std::to_string(2 * rank) +
                        " values (the starts, then the ends), got " + doubles_str(r.roi));
  for (double v : r.roi)
    if (!std::isfinite(v)) return op_error(op, ins, "roi " + doubles_str(r.roi) + " is not finite");
  if (!std::isfinite(r.cubic_a)) return op_error(op, ins, "cubic_coeff_a is not finite");
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (at.dims[i] < -1)
      return op_error(op, ins, "sizes " + shape_str(at.dims) + " must be >= 0 (or -1: unchanged)");
    out[i] = at.dims[i] < 0 ? x.shape[i] : at.dims[i];
    if (out[i] > 0 && x.shape[i] == 0)
      return op_error(
          op, ins,
          "cannot resize an empty axis " + std::to_string(i) + " to " + std::to_string(out[i]));
  }
  return TensorMeta{x.dtype, out};
}

}  // namespace

// GridSample: [N, C, H_out, W_out] from x [N, C, H, W] and grid [N, H_out, W_out, 2]; the Ns
// are guarded equal, the rest checked at the traced sizes.
Expected<SymMeta> grid_sample_shape(ShapeRule& r) {
  if (r.inputs() != 2) return r.error("expects x and grid");
  const Attrs::Resample& rs = r.attrs().resample;
  if (!is_floating(r.dtype(0)) || !is_floating(r.dtype(1)))
    return r.error("needs floating-point x and grid");
  if (r.rank(0) != 4) return r.error("x must be [N, C, H, W]");
  const Shape &x_at = r.meta(0).shape, &grid_at = r.meta(1).shape;  // the traced sizes
  const char* grid_error = "grid must be [N, H_out, W_out, 2] with x's N";
  if (r.rank(1) != 4 || grid_at[3] != 2) return r.error(grid_error);
  const SymShape &x = r.shape(0), &grid = r.shape(1);
  KILN_RETURN_IF_ERROR(r.expect_equal(x[0], grid[0], grid_error));
  if (rs.mode < kResampleNearest || rs.mode > kResampleCubic)
    return r.error("mode " + std::to_string(rs.mode) + " is not nearest, bilinear or bicubic");
  if (rs.padding < 0 || rs.padding > 2)
    return r.error("padding mode " + std::to_string(rs.padding) +
                   " is not zeros (0), border (1) or reflection (2)");
  if (grid_at[1] * grid_at[2] > 0 && (x_at[2] == 0 || x_at[3] == 0))
    return r.error("cannot sample an empty input");
  return SymMeta{r.dtype(0), {x[0], x[1], grid[1], grid[2]}};
}

std::string resample_str(OpKind op, const std::vector<int64_t>& dims, const Attrs::Resample& r) {
  std::string s = std::string("mode=") + resample_mode_name(op, r.mode);
  if (op == OpKind::GridSample) {
    static const char* const pad[] = {"zeros", "border", "reflection"};
    s += std::string(", padding=") + (r.padding >= 0 && r.padding < 3 ? pad[r.padding] : "?");
    if (r.align_corners) s += ", align_corners";
    return s;
  }
  s += ", sizes=" + shape_str(dims) + ", scales=" + doubles_str(r.scales) +
       ", coord=" + coord_name(r.coord);
  if (r.mode == kResampleNearest) s += std::string(", nearest=") + nearest_name(r.nearest);
  char buf[32];
  if (r.mode == kResampleCubic) {
    std::snprintf(buf, sizeof buf, "%.9g", r.cubic_a);
    s += std::string(", cubic_a=") + buf + (r.exclude_outside ? ", exclude_outside" : "");
  }
  if (r.coord == static_cast<int64_t>(ResizeCoord::kTfCropAndResize)) {
    std::snprintf(buf, sizeof buf, "%.9g", r.extrapolation);
    s += ", roi=" + doubles_str(r.roi) + ", extrapolation=" + buf;
  }
  return s;
}

Expected<TensorMeta> infer_meta_resample(OpKind op, std::span<const TensorMeta> ins,
                                         const Attrs& attrs) {
  return resize_meta(op, ins, attrs);
}

}  // namespace kiln::detail
