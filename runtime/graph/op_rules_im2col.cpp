// im2col's shape rule (graph/shape_rule.h): x [N, C, H, W] f32 of static sizes (codegen lowers
// only convs of static shape this way), Attrs::window's kernel, strides, pads and dilations for
// the two spatial dims; the window must fit the padded input. Attrs::index is the layout: rows
// (0) gives f32 [N * OH * OW, C * KH * KW], columns (1) its transpose.
#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> im2col_shape(ShapeRule& r) {
  const Attrs& a = r.attrs();
  const Attrs::Window& w = a.window;
  if (r.dtype(0) != DType::kF32) return r.error("x must be f32");
  if (r.rank(0) != 4) return r.error("x must be [N, C, H, W]");
  if (a.index != 0 && a.index != 1) return r.error("layout must be rows or columns");
  if (w.kernel.size() != 2 || w.strides.size() != 2 || w.dilations.size() != 2 ||
      w.pads.size() != 4)
    return r.error("needs a 2-D window: kernel, strides and dilations of 2, pads of 4");
  for (const SymInt& d : r.shape(0))
    if (!d.is_constant()) return r.error("needs static sizes");
  const Shape& x = r.meta(0).shape;
  int64_t positions = x[0], taps = x[1];
  for (size_t i = 0; i < 2; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 || w.pads[i] < 0 ||
        w.pads[i + 2] < 0)
      return r.error("kernel, strides and dilations must be >= 1, pads >= 0");
    const int64_t o = window_output_size(x[i + 2], w.kernel[i], w.strides[i], w.pads[i],
                                         w.pads[i + 2], w.dilations[i], false);
    if (o < 0) return r.error("the window is larger than the padded input");
    positions *= o;
    taps *= w.kernel[i];
  }
  SymShape out = a.index == 0 ? SymShape{SymInt(positions), SymInt(taps)}
                              : SymShape{SymInt(taps), SymInt(positions)};
  return SymMeta{DType::kF32, out};
}

}  // namespace kiln::detail
