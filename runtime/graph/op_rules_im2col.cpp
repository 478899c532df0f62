// im2col's shape rule (graph/shape_rule.h): x [N, C, H, W] f32 with a static channel count,
// Attrs::window's kernel, strides, pads and dilations for
// the two spatial dims; the window must fit the padded input. Gives f32 [N * OH * OW, K4]: the
// K = C * KH * KW taps of each output position, then zeros up to a multiple of 4.
#include <array>

#include "graph/shape_rule.h"
#include "graph/window_size.h"

namespace kiln {

SymInt window_output_sym(const SymInt& in, const Attrs::Window& w, size_t dim) {
  const int64_t k = w.kernel[dim], s = w.strides[dim], pb = w.pads[dim], pe = w.pads[dim + 2],
                d = w.dilations[dim];
  if (in.is_constant())
    return SymInt(window_output_size(in.constant_value(), k, s, pb, pe, d, false));
  return sym_floordiv(in + SymInt(pb + pe - (d * (k - 1) + 1)), SymInt(s)) + SymInt(1);
}

}  // namespace kiln

namespace kiln::detail {

Expected<std::array<SymInt, 2>> window_2d_output(ShapeRule& r, size_t first) {
  const Attrs::Window& w = r.attrs().window;
  if (w.kernel.size() != 2 || w.strides.size() != 2 || w.dilations.size() != 2 ||
      w.pads.size() != 4)
    return r.error("needs a 2-D window: kernel, strides and dilations of 2, pads of 4");
  std::array<SymInt, 2> out;
  for (size_t i = 0; i < 2; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 || w.pads[i] < 0 ||
        w.pads[i + 2] < 0)
      return r.error("kernel, strides and dilations must be >= 1, pads >= 0");
    // At the traced sizes (the conv this stands for guarded the window's fit).
    if (window_output_size(r.meta(0).shape[first + i], w.kernel[i], w.strides[i], w.pads[i],
                           w.pads[i + 2], w.dilations[i], false) < 0)
      return r.error("the window is larger than the padded input");
    out[i] = window_output_sym(r.shape(0)[first + i], w, i);
  }
  return out;
}

Expected<SymMeta> im2col_shape(ShapeRule& r) {
  const Attrs& a = r.attrs();
  const Attrs::Window& w = a.window;
  if (r.dtype(0) != DType::kF32) return r.error("x must be f32");
  if (r.rank(0) != 4) return r.error("x must be [N, C, H, W]");
  const SymShape& x = r.shape(0);
  if (!x[1].is_constant()) return r.error("needs a static channel count");
  KILN_ASSIGN_OR_RETURN(const auto out, window_2d_output(r, 2));
  const SymInt positions = x[0] * out[0] * out[1];
  const int64_t taps = x[1].constant_value() * w.kernel[0] * w.kernel[1];
  return SymMeta{DType::kF32, SymShape{positions, SymInt(im2col_row_length(taps))}};
}

}  // namespace kiln::detail
