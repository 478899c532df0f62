// MaxUnpool: x's elements are written, in row-major order, at the flat positions of the output
// their indices give (a later write replaces an earlier one); every other output element is
// zero. The output is MaxPool's input again: its shape is output_shape when given (odd sizes
// that the pooling floored), else the unpooled shape (graph/shape_rule.h). An index outside the
// output is an error.
#include <cstring>
#include <vector>

#include "eager/interpreter_ops.h"

namespace kiln::eager {

Status eval_max_unpool(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor& x = *ins[0];
  const HostTensor& index = *ins[1];
  const size_t es = dtype_size(x.meta.dtype);
  const int64_t size = out.meta.numel();
  if (!out.data.empty()) std::memset(out.data.data(), 0, out.data.size());
  for (int64_t j = 0; j < x.meta.numel(); ++j) {
    int64_t at = 0;
    std::memcpy(&at, index.data.data() + static_cast<size_t>(j) * sizeof(int64_t), sizeof at);
    if (at < 0 || at >= size)
      return invalid_argument(std::string(op_name(node.op)) + ": index " + std::to_string(at) +
                              " is outside the output's " + std::to_string(size) + " elements");
    const int64_t o = at;
    std::memcpy(out.data.data() + static_cast<size_t>(o) * es,
                x.data.data() + static_cast<size_t>(j) * es, es);
  }
  return {};
}

}  // namespace kiln::eager
