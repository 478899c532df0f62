// MaxUnpool (opsets 9, 11, 22): x, the indices MaxPool returned and an optional output_shape
// (constant elements); kernel_shape, pads (default 0) and strides (default 1).
#include "onnx/importer.h"
#include "tensor/apply_op.h"

namespace kiln::onnx {

void register_max_unpool_ops(std::map<std::string, OpHandler>& t) {
  t["MaxUnpool"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    Attrs a;
    a.window.kernel = c.attr_ints("kernel_shape");
    const size_t k = a.window.kernel.size();
    a.window.strides = c.has_attr("strides") ? c.attr_ints("strides") : std::vector<int64_t>(k, 1);
    a.window.pads = c.has_attr("pads") ? c.attr_ints("pads") : std::vector<int64_t>(2 * k, 0);
    if (c.has(2)) a.dims = c.int_values(2);
    c.set(0, apply_op(OpKind::MaxUnpool, {x, c.in(1)}, std::move(a), Loc::current()));
  };
}

}  // namespace kiln::onnx
