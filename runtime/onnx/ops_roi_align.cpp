// RoiAlign (opsets 10, 16): X, rois, batch_indices; mode avg / max, output_height and
// output_width (default 1), sampling_ratio (default 0: adaptive), spatial_scale (default 1) and,
// from opset 16, coordinate_transformation_mode half_pixel (the default) / output_half_pixel
// (opset 10's only behaviour).
#include "onnx/importer.h"
#include "tensor/apply_op.h"

namespace kiln::onnx {

void register_roi_align_ops(std::map<std::string, OpHandler>& t) {
  t["RoiAlign"] = [](NodeCtx& c) {
    if (!c.has(0) || !c.has(1) || !c.has(2)) c.fail("needs X, rois and batch_indices");
    Attrs a;
    const std::string mode = c.attr_s("mode", "avg");
    if (mode != "avg" && mode != "max") c.fail("mode '" + mode + "' is not avg or max");
    a.index = mode == "max" ? 1 : 0;
    const std::string coord = c.attr_s("coordinate_transformation_mode",
                                       c.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (coord != "half_pixel" && coord != "output_half_pixel")
      c.fail("coordinate_transformation_mode '" + coord +
             "' is not half_pixel or "
             "output_half_pixel");
    a.axis = coord == "half_pixel" ? 0 : 1;
    a.dims = {c.attr_i("output_height", 1), c.attr_i("output_width", 1),
              c.attr_i("sampling_ratio", 0)};
    a.scalar = c.attr_f("spatial_scale", 1.0);
    c.set(0, apply_op(OpKind::RoiAlign, {c.in(0), c.in(1), c.in(2)}, std::move(a), Loc::current()));
  };
}

}  // namespace kiln::onnx
