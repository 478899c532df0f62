// nms_select's shape rule (graph/shape_rule.h): boxes f32 [B, N, 4], scores f32 [B, C, N] and
// order i64 [B, C, N] (the positions of each row's boxes by descending score); Attrs::dims =
// {the most boxes kept per class, >= 0}, Attrs::range = {IoU threshold, score threshold}. The
// output is i64 [B, C, N]: each row's kept positions, then -1. Every size may be symbolic (N a
// data-dependent one: the boxes left after a score filter).
#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> nms_shape(ShapeRule& r) {
  const Attrs& a = r.attrs();
  if (a.dims.size() != 1 || a.dims[0] < 0)
    return r.error("needs the most boxes per class (>= 0) as its one dim");
  if (a.range.size() != 2) return r.error("needs the IoU and score thresholds as its range");
  if (r.dtype(0) != DType::kF32 || r.dtype(1) != DType::kF32)
    return r.error("boxes and scores must be f32");
  if (r.dtype(2) != DType::kI64) return r.error("order must be i64");
  if (r.rank(0) != 3 || r.rank(1) != 3 || r.rank(2) != 3)
    return r.error("needs boxes [B, N, 4], scores [B, C, N] and order [B, C, N]");
  const SymShape &boxes = r.shape(0), &scores = r.shape(1);
  KILN_RETURN_IF_ERROR(r.expect_equal(boxes[2], SymInt(4), "boxes must be [B, N, 4]"));
  KILN_RETURN_IF_ERROR(r.equal(boxes[0], scores[0], "boxes' and scores' batch").status());
  KILN_RETURN_IF_ERROR(r.equal(boxes[1], scores[2], "boxes' and scores' box counts").status());
  KILN_RETURN_IF_ERROR(r.expect_same_shape(scores, r.shape(2), "order must have scores' shape"));
  return SymMeta{DType::kI64, scores};
}

}  // namespace kiln::detail
