// ONNX Resize (opsets 10-18), Upsample (opsets 7 and 9) and GridSample (opset 16) onto
// kiln::interpolate and kiln::grid_sample. Scales, sizes and roi are read on the host (a
// model input or a computed tensor there is a graph break guarded by its values, as for
// Reshape's shape); output sizes follow ONNX: floor(size * scale), or the sizes given.
#include <cmath>
#include <optional>

#include "onnx/importer.h"

namespace kiln::onnx {
namespace {

InterpMode interp_mode(NodeCtx& c, const std::string& mode) {
  if (mode == "nearest") return InterpMode::kNearest;
  if (mode == "linear" || mode == "bilinear") return InterpMode::kLinear;
  if (mode == "cubic") return InterpMode::kCubic;
  c.unsupported("mode '" + mode + "' is not supported (nearest, linear, cubic are)");
}

CoordTransform coord_mode(NodeCtx& c, const std::string& s) {
  if (s == "half_pixel") return CoordTransform::kHalfPixel;
  if (s == "pytorch_half_pixel") return CoordTransform::kPytorchHalfPixel;
  if (s == "align_corners") return CoordTransform::kAlignCorners;
  if (s == "asymmetric") return CoordTransform::kAsymmetric;
  if (s == "tf_half_pixel_for_nn") return CoordTransform::kTfHalfPixelForNn;
  if (s == "tf_crop_and_resize") return CoordTransform::kTfCropAndResize;
  c.unsupported("coordinate_transformation_mode '" + s + "' is not supported");
}

NearestRounding nearest_mode(NodeCtx& c, const std::string& s) {
  if (s == "round_prefer_floor") return NearestRounding::kRoundPreferFloor;
  if (s == "round_prefer_ceil") return NearestRounding::kRoundPreferCeil;
  if (s == "floor") return NearestRounding::kFloor;
  if (s == "ceil") return NearestRounding::kCeil;
  c.unsupported("nearest_mode '" + s + "' is not supported");
}

/// floor(size * s) over a symbolic size, without a guard, when s = m / 2^k exactly with a small
/// m (2, 0.5, 1.5, 0.25 ...): size * s is then exact in double, as the reference computes it, so
/// its floor is the integer (size * m) floor-divided by 2^k. Other scales: nullopt.
std::optional<SymSize> symbolic_scaled(const SymSize& size, double s) {
  for (int k = 0; k <= 24; ++k) {
    const double m = std::ldexp(s, k);
    if (m >= double(1 << 20)) break;
    if (m != std::floor(m)) continue;
    const auto num = static_cast<int64_t>(m);
    return k == 0 ? size * num : size * num / (int64_t{1} << k);
  }
  return std::nullopt;
}

/// Sizes and scales of every axis from per-axis scales: floor(size * scale) (double, as
/// ONNX's reference), an unchanged axis (scale 1) kept as -1 so a symbolic size stays so; a
/// symbolic size scaled by a dyadic scale stays symbolic (symbolic_scaled).
void from_scales(NodeCtx& c, const Tensor& x, const std::vector<double>& scales,
                 std::vector<SymSize>& sizes, InterpolateOptions& opt) {
  const auto rank = static_cast<size_t>(x.dim());
  if (scales.size() != rank)
    c.fail("scales needs one value per axis (" + std::to_string(rank) + "), got " +
           std::to_string(scales.size()));
  for (size_t i = 0; i < rank; ++i) {
    const double s = scales[i];
    if (!(s > 0) || !std::isfinite(s)) c.fail("scales must be positive and finite");
    const SymSize in = x.sizes()[i];
    if (s == 1.0) {
      sizes.push_back(-1);
    } else if (std::optional<SymSize> scaled = in.is_symbolic() && in.hint() < (int64_t{1} << 31)
                                                   ? symbolic_scaled(in, s)
                                                   : std::nullopt) {
      if (std::floor(static_cast<double>(in.hint()) * s) > double(int64_t{1} << 31))
        c.fail("scales give an output over 2^31 elements");
      sizes.push_back(*scaled);
    } else {
      const double out = std::floor(static_cast<double>(in.value()) * s);
      if (out > double(int64_t{1} << 31)) c.fail("scales give an output over 2^31 elements");
      sizes.push_back(static_cast<int64_t>(out));
    }
    opt.scales.push_back(s);
  }
}

/// Opset 10 Resize and Upsample: asymmetric coordinates, nearest truncating when upsampling and
/// rounding up when downsampling (ONNX Runtime's rule for these opsets).
Tensor legacy_resize(NodeCtx& c, const Tensor& x, const std::vector<double>& scales,
                     const std::string& mode) {
  InterpolateOptions opt;
  opt.mode = interp_mode(c, mode);
  opt.coord = CoordTransform::kAsymmetric;
  bool up = false, down = false;
  for (double s : scales) {
    up = up || s > 1.0;
    down = down || s < 1.0;
  }
  if (opt.mode == InterpMode::kNearest && up && down)
    c.unsupported("nearest with some axes upsampled and others downsampled");
  opt.nearest = down ? NearestRounding::kCeil : NearestRounding::kFloor;
  std::vector<SymSize> sizes;
  from_scales(c, x, scales, sizes, opt);
  return interpolate(x, sizes, opt);
}

void resize_op(NodeCtx& c) {
  Tensor x = c.in(0);
  const std::string mode = c.attr_s("mode", "nearest");
  if (c.opset() < 11) {
    c.set(0, legacy_resize(c, x, c.doubles(1), mode));
    return;
  }
  const auto rank = static_cast<int64_t>(x.dim());
  InterpolateOptions opt;
  opt.mode = interp_mode(c, mode);
  opt.coord = coord_mode(c, c.attr_s("coordinate_transformation_mode", "half_pixel"));
  opt.nearest = nearest_mode(c, c.attr_s("nearest_mode", "round_prefer_floor"));
  opt.cubic_a = c.attr_f("cubic_coeff_a", -0.75);
  opt.exclude_outside = c.attr_i("exclude_outside", 0) != 0;
  opt.extrapolation_value = c.attr_f("extrapolation_value", 0.0);
  if (c.attr_i("antialias", 0) != 0) c.unsupported("antialias is not supported");
  // Opset 18: scales / sizes / roi may cover a subset of the axes.
  std::vector<int64_t> axes;
  for (int64_t a : c.attr_ints("axes")) axes.push_back(axis_of(c, a, rank));
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  const size_t k = axes.size();
  auto spread = [&](const std::vector<double>& given, double fill) {
    if (given.size() != k)
      c.fail("scales / sizes need one value per axis (" + std::to_string(k) + "), got " +
             std::to_string(given.size()));
    std::vector<double> all(static_cast<size_t>(rank), fill);
    for (size_t i = 0; i < k; ++i) all[static_cast<size_t>(axes[i])] = given[i];
    return all;
  };
  // Each read once: a model input or computed tensor is a host read.
  const std::vector<double> scales_in = c.has(2) ? c.doubles(2) : std::vector<double>{};
  const std::vector<int64_t> sizes_in = c.has(3) ? c.int_values(3) : std::vector<int64_t>{};
  const bool has_scales = !scales_in.empty();
  if (has_scales == !sizes_in.empty()) c.fail("exactly one of scales and sizes must be given");
  if (opt.coord == CoordTransform::kTfCropAndResize) {
    if (!c.has(1)) c.fail("tf_crop_and_resize needs a roi");
    const std::vector<double> roi = c.doubles(1);
    if (roi.size() != 2 * k) c.fail("roi needs " + std::to_string(2 * k) + " values");
    const std::vector<double> starts = spread({roi.begin(), roi.begin() + static_cast<long>(k)}, 0);
    const std::vector<double> ends = spread({roi.begin() + static_cast<long>(k), roi.end()}, 1);
    opt.roi = starts;
    opt.roi.insert(opt.roi.end(), ends.begin(), ends.end());
  }
  std::vector<SymSize> sizes;
  if (has_scales) {
    from_scales(c, x, spread(scales_in, 1.0), sizes, opt);
  } else {
    std::vector<double> given;
    for (int64_t v : sizes_in) given.push_back(static_cast<double>(v));
    const std::string policy = c.attr_s("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      const std::vector<double> all = spread(given, -1.0);
      for (size_t i = 0; i < all.size(); ++i) {
        sizes.push_back(static_cast<int64_t>(all[i]));
        opt.scales.push_back(0.0);  // the size ratio
      }
    } else if (policy == "not_larger" || policy == "not_smaller") {
      double s = policy == "not_larger" ? INFINITY : 0.0;
      for (size_t i = 0; i < k; ++i) {
        const double r = given[i] / static_cast<double>(x.sizes()[axes[i]].value());
        s = policy == "not_larger" ? std::min(s, r) : std::max(s, r);
      }
      std::vector<double> scales(static_cast<size_t>(rank), 1.0);
      for (int64_t a : axes) scales[static_cast<size_t>(a)] = s;
      for (size_t i = 0; i < scales.size(); ++i) {
        opt.scales.push_back(scales[i]);
        sizes.push_back(scales[i] == 1.0 ? -1
                                         : static_cast<int64_t>(std::nearbyint(
                                               s * static_cast<double>(x.sizes()[i].value()))));
      }
    } else {
      c.unsupported("keep_aspect_ratio_policy '" + policy + "'");
    }
  }
  for (const SymSize& s : sizes)
    if (!s.is_symbolic() && s.hint() < -1) c.fail("sizes must be >= 0");
  c.set(0, interpolate(x, sizes, opt));
}

void upsample_op(NodeCtx& c) {
  Tensor x = c.in(0);
  std::vector<double> scales;
  if (c.opset() >= 9) {
    scales = c.doubles(1);
  } else {
    const ::onnx::NodeProto& n = c.node();
    for (const auto& a : n.attribute())
      if (a.name() == "scales") scales.assign(a.floats().begin(), a.floats().end());
  }
  c.set(0, legacy_resize(c, x, scales, c.attr_s("mode", "nearest")));
}

void grid_sample_op(NodeCtx& c) {
  const std::string mode = c.attr_s("mode", "bilinear");
  InterpMode m = InterpMode::kLinear;
  if (mode == "nearest")
    m = InterpMode::kNearest;
  else if (mode == "bicubic")
    m = InterpMode::kCubic;
  else if (mode != "bilinear")
    c.unsupported("mode '" + mode + "' is not supported (bilinear, nearest, bicubic are)");
  const std::string pad = c.attr_s("padding_mode", "zeros");
  int padding = 0;
  if (pad == "border")
    padding = 1;
  else if (pad == "reflection")
    padding = 2;
  else if (pad != "zeros")
    c.unsupported("padding_mode '" + pad + "' is not supported");
  c.set(0, grid_sample(c.in(0), c.in(1), m, padding, c.attr_i("align_corners", 0) != 0));
}

}  // namespace

void register_resize_ops(std::map<std::string, OpHandler>& t) {
  t["Resize"] = resize_op;
  t["Upsample"] = upsample_op;
  t["GridSample"] = grid_sample_op;
}

}  // namespace kiln::onnx
