// The CPU interpreter's Compaction ops (reference semantics). MaskedSelect(data, mask): the
// elements of data where mask is true, in row-major order, as a 1-D tensor of data's dtype.
// NonZero(x): the coordinates of x's non-zero elements (NaN counts as non-zero), row-major,
// as i64 [count, rank]. The result's length is whatever is selected; the node's meta only
// bounds it.
#include <cstring>
#include <string>

#include "eager/host_ops.h"
#include "eager/interpreter_ops.h"

namespace kiln::eager {

Status eval_compaction(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  if (node.op == OpKind::NonZero && ins.size() == 1) {
    out = host_nonzero(*ins[0]);
    return Status::ok_status();
  }
  if (node.op != OpKind::MaskedSelect || ins.size() != 2)
    return internal_error(std::string("eval_compaction: unexpected op ") + op_name(node.op));
  const HostTensor &data = *ins[0], &mask = *ins[1];
  if (mask.meta.dtype != DType::kBool || mask.meta.shape != data.meta.shape)
    return invalid_argument("masked_select: the mask " + mask.meta.str() +
                            " must be bool with data's shape " + data.meta.str());
  const int64_t n = data.meta.numel();
  const uint8_t* m = mask.ptr<uint8_t>();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += m[i] != 0;
  out = HostTensor(TensorMeta{data.meta.dtype, {count}});
  const size_t width = dtype_size(data.meta.dtype);
  const auto* src = data.ptr<uint8_t>();
  auto* dst = out.ptr<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (m[i] == 0) continue;
    std::memcpy(dst, src + static_cast<size_t>(i) * width, width);
    dst += width;
  }
  return Status::ok_status();
}

}  // namespace kiln::eager
