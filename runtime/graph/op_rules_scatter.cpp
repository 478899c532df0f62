// Shape and dtype rules of the Scatter ops (ONNX semantics): the output has data's meta.
//   ScatterElements: indices (i32/i64) of data's rank, updates of the indices' shape, each
//     indices dim no larger than data's outside the axis.
//   ScatterND: indices [..., m] with 1 <= m <= rank(data), updates of shape
//     indices.shape[:-1] + data.shape[m:].
// Updates have data's dtype; the add and mul reductions need a numeric one. Every error names
// the op and its input metas (detail::op_error), then the offending value.
#include <string>

#include "graph/op.h"

namespace kiln::detail {

Expected<TensorMeta> infer_meta_scatter(OpKind op, std::span<const TensorMeta> ins,
                                        const Attrs& at) {
  auto bad = [&](const std::string& what) { return op_error(op, ins, what); };
  if (ins.size() != 3) return bad("expects data, indices and updates");
  const TensorMeta &data = ins[0], &idx = ins[1], &upd = ins[2];
  if (idx.dtype != DType::kI32 && idx.dtype != DType::kI64)
    return bad("indices must be i32 or i64, got " + std::string(dtype_name(idx.dtype)));
  if (upd.dtype != data.dtype)
    return bad("updates must have data's dtype " + std::string(dtype_name(data.dtype)) + ", got " +
               dtype_name(upd.dtype));
  if (at.index < kScatterNone || at.index > kScatterMul)
    return bad("reduction " + std::to_string(at.index) + " must be none (0), add (1) or mul (2)");
  if (at.index != kScatterNone && data.dtype == DType::kBool)
    return bad("the add and mul reductions need a numeric dtype, got bool");
  const int r = data.rank();
  if (r < 1) return bad("data must be at least 1-D");
  if (op == OpKind::ScatterElements) {
    if (at.axis < 0 || at.axis >= r)
      return bad("axis " + std::to_string(at.axis) + " is out of range for rank " +
                 std::to_string(r));
    if (idx.rank() != r) return bad("indices must have data's rank " + std::to_string(r));
    if (upd.shape != idx.shape)
      return bad("updates must have the indices' shape " + shape_str(idx.shape));
    for (int d = 0; d < r; ++d)
      if (d != at.axis && idx.shape[d] > data.shape[d])
        return bad("indices dim " + std::to_string(d) + " (" + std::to_string(idx.shape[d]) +
                   ") exceeds data's (" + std::to_string(data.shape[d]) + ")");
    return data;
  }
  if (idx.rank() < 1) return bad("indices must be at least 1-D");
  const int64_t m = idx.shape.back();
  if (m < 1 || m > r)
    return bad("the indices' last dim (" + std::to_string(m) + ") must be in [1, " +
               std::to_string(r) + "] (data's rank)");
  Shape want(idx.shape.begin(), idx.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + m, data.shape.end());
  if (upd.shape != want) return bad("updates must have shape " + shape_str(want));
  return data;
}

}  // namespace kiln::detail
