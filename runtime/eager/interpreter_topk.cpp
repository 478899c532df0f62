// topk_indices: the positions of the k largest (or smallest) elements of each row of x's last
// dim, in TopK's order (eager/host_ops.h: topk_indices, which host_topk shares), so the
// interpreter, the host op and the kernel (codegen/lower_topk.cpp) agree on ties, NaN and -0.0.
#include "eager/host_ops.h"
#include "eager/interpreter_ops.h"

namespace kiln::eager {

Status eval_topk(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const int64_t k = node.attrs.dims[0];  // -1: the whole row
  topk_indices(*ins[0], k == -1 ? ins[0]->meta.shape.back() : k, node.attrs.index == 1, out);
  return {};
}

}  // namespace kiln::eager
