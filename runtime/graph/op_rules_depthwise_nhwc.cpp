// depthwise_nhwc's shape rule (graph/shape_rule.h): x [N, H, W, C] f32 with a static channel
// count, weight [C, 1, KH, KW] f32 of static shape, an optional bias [C] f32; Attrs::window's
// kernel (KH, KW), strides, pads and dilations for the two spatial dims, the window fitting the
// padded input. Gives f32 [N, OH, OW, C].
#include "graph/shape_rule.h"

namespace kiln::detail {
namespace {

bool is_size(const SymInt& v, int64_t c) {
  return v.is_constant() && v.constant_value() == c;
}

}  // namespace

Expected<SymMeta> depthwise_nhwc_shape(ShapeRule& r) {
  const Attrs::Window& w = r.attrs().window;
  if (r.inputs() != 2 && r.inputs() != 3) return r.error("takes x, weight and an optional bias");
  for (size_t i = 0; i < r.inputs(); ++i)
    if (r.dtype(i) != DType::kF32) return r.error("x, weight and bias must be f32");
  if (r.rank(0) != 4) return r.error("x must be [N, H, W, C]");
  if (w.kernel.size() != 2) return r.error("needs a 2-D window");
  const SymShape& x = r.shape(0);
  if (!x[3].is_constant()) return r.error("needs a static channel count");
  const int64_t c = x[3].constant_value();
  const SymShape& ws = r.shape(1);
  if (ws.size() != 4 || !is_size(ws[0], c) || !is_size(ws[1], 1) || !is_size(ws[2], w.kernel[0]) ||
      !is_size(ws[3], w.kernel[1]))
    return r.error("weight must be [C, 1, KH, KW] with the window's kernel");
  if (r.inputs() == 3 && (r.rank(2) != 1 || !is_size(r.shape(2)[0], c)))
    return r.error("bias must be [C]");
  KILN_ASSIGN_OR_RETURN(const auto out, window_2d_output(r, 1));
  return SymMeta{DType::kF32, SymShape{x[0], out[0], out[1], x[3]}};
}

}  // namespace kiln::detail
