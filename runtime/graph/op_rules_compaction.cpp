// The Compaction ops' shape rule, written once over symbolic sizes (graph/shape_rule.h).
// MaskedSelect(data, mask): mask is bool and has data's shape (the public function broadcasts
// both first; the sizes are guarded equal); the result is 1-D with data's dtype. NonZero(x): x
// of rank >= 1; the result is i64 [length, rank(x)]. The length is data-dependent: the node
// carries it as attrs.dims[0] (the hint of the unbacked size symbol attrs.index, -1 once
// instantiated), so the rule checks it against the largest possible length, numel(data) at
// the traced sizes, and gives the symbol as the symbolic length.
#include <string>

#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> compaction_shape(ShapeRule& r) {
  const Attrs& at = r.attrs();
  if (at.dims.size() != 1) return r.error("expects the result's length in attrs.dims");
  const int64_t length = at.dims[0];
  // Graph::instantiate may write a few more than numel: the kernels' room for the count.
  auto check_length = [&](int64_t most) -> Status {
    if (length < 0 || length > most + 8)
      return r.error("result length " + std::to_string(length) + " outside [0, " +
                     std::to_string(most) + "]");
    return Status::ok_status();
  };
  const SymInt len = r.symbolic() && at.index >= 0
                         ? SymInt(SymExpr::symbol(static_cast<int>(at.index)))
                         : SymInt(length);
  if (r.op() == OpKind::NonZero) {
    if (r.inputs() != 1) return r.error("expects one input");
    if (r.rank(0) < 1) return r.error("needs a tensor of rank 1 or more");
    KILN_RETURN_IF_ERROR(check_length(r.meta(0).numel()));
    return SymMeta{DType::kI64, {len, SymInt(r.rank(0))}};
  }
  if (r.inputs() != 2) return r.error("expects data and a mask");
  if (r.dtype(1) != DType::kBool)
    return r.error("the mask must be bool, got " + std::string(dtype_name(r.dtype(1))));
  KILN_RETURN_IF_ERROR(r.expect_same_shape(
      r.shape(0), r.shape(1),
      "the mask must have data's shape " + shape_str(r.meta(0).shape) + " (broadcast first)"));
  KILN_RETURN_IF_ERROR(check_length(r.meta(0).numel()));
  return SymMeta{r.dtype(0), {len}};
}

}  // namespace kiln::detail
