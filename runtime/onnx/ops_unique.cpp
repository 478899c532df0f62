// Unique (opset 11) through kiln::unique: device ops, no graph break (the sort_slices kernel op,
// gathers, scatters, a cumsum and masked_select); its four outputs are Y, indices,
// inverse_indices and counts.
#include <optional>

#include "onnx/importer.h"

namespace kiln::onnx {

void register_unique_ops(std::map<std::string, OpHandler>& t) {
  t["Unique"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    std::optional<int64_t> axis;
    if (c.has_attr("axis")) axis = axis_of(c, c.attr_i("axis", 0), x.dim());
    UniqueResult r = unique(x, axis, c.attr_i("sorted", 1) != 0);
    const Tensor outs[] = {r.values, r.indices, r.inverse, r.counts};
    for (size_t i = 0; i < 4; ++i)
      if (c.wants(i)) c.set(i, outs[i]);
  };
}

}  // namespace kiln::onnx
