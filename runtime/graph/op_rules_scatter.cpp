// The Scatter ops' shape rule, written once over symbolic sizes (graph/shape_rule.h; ONNX
// semantics): the output has data's meta.
//   ScatterElements: indices (i32/i64) of data's rank, updates of the indices' shape (guarded
//     equal), each indices dim no larger than data's outside the axis (checked at the traced
//     sizes).
//   ScatterND: indices [..., m] with 1 <= m <= rank(data) (m specialised), updates of shape
//     indices.shape[:-1] + data.shape[m:] (guarded equal).
// Updates have data's dtype; the add and mul reductions need a numeric one. Every error names
// the op and its input metas, then the offending value.
#include <string>

#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> scatter_shape(ShapeRule& r) {
  if (r.inputs() != 3) return r.error("expects data, indices and updates");
  const Attrs& at = r.attrs();
  const DType dt = r.dtype(0), idt = r.dtype(1), udt = r.dtype(2);
  if (idt != DType::kI32 && idt != DType::kI64)
    return r.error("indices must be i32 or i64, got " + std::string(dtype_name(idt)));
  if (udt != dt)
    return r.error("updates must have data's dtype " + std::string(dtype_name(dt)) + ", got " +
                   dtype_name(udt));
  if (at.index < kScatterNone || at.index > kScatterMul)
    return r.error("reduction " + std::to_string(at.index) +
                   " must be none (0), add (1) or mul (2)");
  if (at.index != kScatterNone && dt == DType::kBool)
    return r.error("the add and mul reductions need a numeric dtype, got bool");
  const int rank = r.rank(0);
  if (rank < 1) return r.error("data must be at least 1-D");
  const SymShape &data = r.shape(0), &idx = r.shape(1), &upd = r.shape(2);
  if (r.op() == OpKind::ScatterElements) {
    if (at.axis < 0 || at.axis >= rank)
      return r.error("axis " + std::to_string(at.axis) + " is out of range for rank " +
                     std::to_string(rank));
    if (r.rank(1) != rank) return r.error("indices must have data's rank " + std::to_string(rank));
    KILN_RETURN_IF_ERROR(r.expect_same_shape(
        idx, upd, "updates must have the indices' shape " + shape_str(r.meta(1).shape)));
    const Shape &data_at = r.meta(0).shape, &idx_at = r.meta(1).shape;
    for (int d = 0; d < rank; ++d)
      if (d != at.axis && idx_at[d] > data_at[d])
        return r.error("indices dim " + std::to_string(d) + " (" + std::to_string(idx_at[d]) +
                       ") exceeds data's (" + std::to_string(data_at[d]) + ")");
    return SymMeta{dt, data};
  }
  if (r.rank(1) < 1) return r.error("indices must be at least 1-D");
  KILN_ASSIGN_OR_RETURN(const int64_t m, r.constant(idx.back()));
  if (m < 1 || m > rank)
    return r.error("the indices' last dim (" + std::to_string(m) + ") must be in [1, " +
                   std::to_string(rank) + "] (data's rank)");
  SymShape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.begin() + m, data.end());
  KILN_RETURN_IF_ERROR(
      r.expect_same_shape(want, upd, "updates must have shape " + sym_shape_str(want)));
  return SymMeta{dt, data};
}

}  // namespace kiln::detail
