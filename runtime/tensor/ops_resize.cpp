// The Tensor API's resampling ops: interpolate (ONNX Resize) and grid_sample.
#include "capture/trace.h"
#include "tensor/apply_op.h"
#include "tensor/tensor_impl.h"

namespace kiln {

Tensor interpolate(const Tensor& x, Sizes sizes, const InterpolateOptions& opt, Loc loc) {
  Attrs attrs;
  attrs.dims = sizes.hints();
  // A symbolic size: the result's shape over the symbols (-1 keeps the input's, symbolic or
  // not), so that no guard pins the size.
  SymShape target;
  if (current_trace() && sizes.is_symbolic() && x.defined() &&
      sizes.size() == static_cast<size_t>(x.dim())) {
    const Sizes in = x.sizes(loc);
    for (size_t i = 0; i < sizes.size(); ++i)
      target.push_back(
          to_sym_int(!sizes[i].is_symbolic() && sizes[i].hint() < 0 ? in[i] : sizes[i]));
  }
  Attrs::Resample& r = attrs.resample;
  r.mode = static_cast<int64_t>(opt.mode);
  r.coord = static_cast<int64_t>(opt.coord);
  r.nearest = static_cast<int64_t>(opt.nearest);
  r.cubic_a = opt.cubic_a;
  r.exclude_outside = opt.exclude_outside;
  r.scales = opt.scales;
  if (r.scales.empty() && x.defined()) r.scales.assign(static_cast<size_t>(x.dim()), 0.0);
  r.roi = opt.roi;
  r.extrapolation = opt.extrapolation_value;
  return apply_op(OpKind::Resize, {x}, std::move(attrs), loc, std::move(target));
}

Tensor grid_sample(const Tensor& x, const Tensor& grid, InterpMode mode, int padding,
                   bool align_corners, Loc loc) {
  Attrs attrs;
  attrs.resample.mode = static_cast<int64_t>(mode);
  attrs.resample.padding = padding;
  attrs.resample.align_corners = align_corners;
  return apply_op(OpKind::GridSample, {x, grid}, std::move(attrs), loc);
}

}  // namespace kiln
