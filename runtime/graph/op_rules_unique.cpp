// sort_slices's shape rule (graph/shape_rule.h): x of rank >= 1 (f32, f16, i32, i64 or bool),
// Attrs::axis in [0, rank); the output is i64 [n], n = x's size along the axis.
#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> unique_shape(ShapeRule& r) {
  const DType dt = r.dtype(0);
  if (dt != DType::kF32 && dt != DType::kF16 && dt != DType::kI32 && dt != DType::kI64 &&
      dt != DType::kBool)
    return r.error("x must be f32, f16, i32, i64 or bool");
  if (r.rank(0) < 1) return r.error("needs x of rank >= 1");
  const int64_t axis = r.attrs().axis;
  if (axis < 0 || axis >= r.rank(0))
    return r.error("axis " + std::to_string(axis) + " is outside x's rank " +
                   std::to_string(r.rank(0)));
  return SymMeta{DType::kI64, {r.shape(0)[static_cast<size_t>(axis)]}};
}

}  // namespace kiln::detail
