// im2col has no ONNX op: codegen's device lowering inserts it for convs (codegen/lower.h,
// lower_for_device); ONNX Conv imports as kiln::conv (ops_nn.cpp). Its row of graph/ops.def
// asks for a registration, which adds nothing.
#include "onnx/importer.h"

namespace kiln::onnx {

void register_im2col_ops(std::map<std::string, OpHandler>&) {}

}  // namespace kiln::onnx
