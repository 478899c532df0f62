// det's shape rule (graph/shape_rule.h): x [..., M, M] of rank >= 2, f32 or f16; the output is
// x's batch dims [...] in x's dtype. M is a constant of the compile (a symbolic M is specialised
// with a guard): the kernel keeps each matrix in a private array of M * M floats.
#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> det_shape(ShapeRule& r) {
  const DType dt = r.dtype(0);
  if (dt != DType::kF32 && dt != DType::kF16) return r.error("x must be f32 or f16");
  if (r.rank(0) < 2) return r.error("needs x of rank >= 2 ([..., M, M])");
  const SymShape& x = r.shape(0);
  KILN_RETURN_IF_ERROR(
      r.expect_equal(x[x.size() - 1], x[x.size() - 2], "x must be square in its last two dims"));
  KILN_RETURN_IF_ERROR(r.constant(x.back()).status());
  return SymMeta{dt, SymShape(x.begin(), x.end() - 2)};
}

}  // namespace kiln::detail
