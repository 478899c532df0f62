// NonMaxSuppression (opsets 10, 11) through kiln::non_max_suppression: device ops, no graph
// break (topk_indices, the nms_select kernel op, nonzero, gather_nd); nms_select's shape rule
// checks the sizes, so a data-dependent box count stays symbolic. The thresholds and the
// per-class limit are small host values, read with value guards.
#include "onnx/importer.h"

namespace kiln::onnx {

void register_nms_ops(std::map<std::string, OpHandler>& t) {
  t["NonMaxSuppression"] = [](NodeCtx& c) {
    Tensor boxes = c.in(0), scores = c.in(1);
    if (boxes.dim() != 3 || scores.dim() != 3)
      c.fail("boxes must be [batch, N, 4] and scores [batch, classes, N]");
    NmsOptions o;
    o.max_per_class = c.has(2) ? c.scalar_int(2) : 0;
    o.iou_threshold = c.has(3) ? c.scalar_double(3) : 0.0;
    if (c.has(4)) o.score_threshold = c.scalar_double(4);
    o.center_boxes = c.attr_i("center_point_box", 0) != 0;
    c.set(0, non_max_suppression(boxes, scores, o));
  };
}

}  // namespace kiln::onnx
