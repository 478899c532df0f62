// topk_indices's shape rule, written once over symbolic sizes (graph/shape_rule.h): x [..., N]
// of rank >= 1 (f32, f16, i32, i64 or bool); Attrs::dims = {k} with 0 <= k <= N (checked at the
// traced sizes) or k = -1, the whole row (a full sort: N may be any size, a data-dependent one
// included); Attrs::index = largest (1) or smallest (0). The output is i64 [..., k] ([..., N]
// for k = -1).
#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> topk_shape(ShapeRule& r) {
  const Attrs& a = r.attrs();
  if (a.dims.size() != 1) return r.error("needs k as its one dim");
  if (a.index != 0 && a.index != 1) return r.error("order must be smallest or largest");
  const DType dt = r.dtype(0);
  if (dt != DType::kF32 && dt != DType::kF16 && dt != DType::kI32 && dt != DType::kI64 &&
      dt != DType::kBool)
    return r.error("x must be f32, f16, i32, i64 or bool");
  if (r.rank(0) < 1) return r.error("needs x of rank >= 1");
  const int64_t k = a.dims[0];
  if (k == -1) return SymMeta{DType::kI64, r.shape(0)};
  if (k < 0) return r.error("k = " + std::to_string(k) + " is negative");
  // Checked at the traced sizes without a guard (Graph::instantiate checks it again at
  // others): N may be a data-dependent length (TopK after a NonZero), which no guard may name.
  if (r.meta(0).shape.back() < k)
    return r.error("k = " + std::to_string(k) + " exceeds the last dim");
  SymShape out = r.shape(0);
  out.back() = SymInt(k);
  return SymMeta{DType::kI64, out};
}

}  // namespace kiln::detail
