// Shape and dtype rules of the Compaction ops. MaskedSelect(data, mask): mask is bool and has
// data's shape (the public function broadcasts both first); the result is 1-D with data's
// dtype. NonZero(x): x of rank >= 1; the result is i64 [length, rank(x)]. The length is
// data-dependent: the node carries it as attrs.dims[0] (the hint of the
// unbacked size symbol attrs.index, -1 once instantiated), so the concrete rule checks it against
// the largest possible length, numel(data).
#include <string>

#include "graph/op.h"

namespace kiln::detail {

Expected<TensorMeta> infer_meta_compaction(OpKind op, std::span<const TensorMeta> ins,
                                           const Attrs& at) {
  auto bad = [&](const std::string& what) { return op_error(op, ins, what); };
  if (at.dims.size() != 1) return bad("expects the result's length in attrs.dims");
  const int64_t length = at.dims[0];
  // Graph::instantiate may write a few more than numel: the kernels' room for the count.
  auto check_length = [&](int64_t most) -> Status {
    if (length < 0 || length > most + 8)
      return bad("result length " + std::to_string(length) + " outside [0, " +
                 std::to_string(most) + "]");
    return Status::ok_status();
  };
  if (op == OpKind::NonZero) {
    if (ins.size() != 1) return bad("expects one input");
    if (ins[0].rank() < 1) return bad("needs a tensor of rank 1 or more");
    KILN_RETURN_IF_ERROR(check_length(ins[0].numel()));
    return TensorMeta{DType::kI64, {length, ins[0].rank()}};
  }
  if (ins.size() != 2) return bad("expects data and a mask");
  const TensorMeta &data = ins[0], &mask = ins[1];
  if (mask.dtype != DType::kBool)
    return bad("the mask must be bool, got " + std::string(dtype_name(mask.dtype)));
  if (mask.shape != data.shape)
    return bad("the mask must have data's shape " + shape_str(data.shape) + " (broadcast first)");
  KILN_RETURN_IF_ERROR(check_length(data.numel()));
  return TensorMeta{data.dtype, {length}};
}

}  // namespace kiln::detail
