// MaxUnpool: x's elements are written, in row-major order, at the flat positions their indices
// give in the unpooled shape (graph/shape_rule.h max_unpool_unpooled_shape; a later write
// replaces an earlier one), each at the same [n, c, i...] of the output, which is that shape
// or larger; every other output element is zero. An index outside [0, unpooled size) is an
// error.
#include <cstring>
#include <vector>

#include "eager/interpreter_ops.h"
#include "graph/shape_rule.h"

namespace kiln::eager {

Status eval_max_unpool(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor& x = *ins[0];
  const HostTensor& index = *ins[1];
  const size_t es = dtype_size(x.meta.dtype);
  const SymShape unpooled_sym =
      detail::max_unpool_unpooled_shape(sym_shape_of(x.meta.shape), node.attrs.window);
  std::vector<int64_t> unpooled;
  int64_t size = 1;
  for (const SymInt& d : unpooled_sym) {
    unpooled.push_back(d.constant_value());
    size *= unpooled.back();
  }
  const Shape& shape = out.meta.shape;
  if (!out.data.empty()) std::memset(out.data.data(), 0, out.data.size());
  for (int64_t j = 0; j < x.meta.numel(); ++j) {
    int64_t at = 0;
    std::memcpy(&at, index.data.data() + static_cast<size_t>(j) * sizeof(int64_t), sizeof at);
    if (at < 0 || at >= size)
      return invalid_argument(std::string(op_name(node.op)) + ": index " + std::to_string(at) +
                              " is outside the unpooled shape's " + std::to_string(size) +
                              " elements");
    // The output position of unpooled element `at`: the same index, row-major in `shape`.
    int64_t o = 0, rest = at, stride = 1;
    for (size_t d = unpooled.size(); d-- > 0;) {
      o += (rest % unpooled[d]) * stride;
      rest /= unpooled[d];
      stride *= shape[d];
    }
    std::memcpy(out.data.data() + static_cast<size_t>(o) * es,
                x.data.data() + static_cast<size_t>(j) * es, es);
  }
  return {};
}

}  // namespace kiln::eager
