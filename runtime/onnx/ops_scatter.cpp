// Scatter ops: ScatterElements (and its opset 9-10 name Scatter) and ScatterND, with the
// reduction attribute of opset 16 (none, add, mul; max and min are not imported).
#include "onnx/importer.h"

namespace kiln::onnx {
namespace {

ScatterReduction reduction_of(NodeCtx& c) {
  const std::string r = c.attr_s("reduction", "none");
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  c.unsupported("reduction '" + r + "' is not supported (none, add, mul)");
}

void scatter_elements_op(NodeCtx& c) {
  Tensor data = c.in(0);
  const int64_t axis = axis_of(c, c.attr_i("axis", 0), data.dim());
  c.set(0, scatter_elements(data, axis, c.in(1), c.in(2), reduction_of(c)));
}

}  // namespace

void register_scatter_ops(std::map<std::string, OpHandler>& t) {
  t["ScatterElements"] = scatter_elements_op;
  t["Scatter"] = scatter_elements_op;
  t["ScatterND"] = [](NodeCtx& c) {
    c.set(0, scatter_nd(c.in(0), c.in(1), c.in(2), reduction_of(c)));
  };
}

}  // namespace kiln::onnx
