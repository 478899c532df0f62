// depthwise_nhwc has no ONNX op: codegen's device lowering inserts it for depthwise convs over
// a lowered conv's product (codegen/conv_lowering.cpp); ONNX Conv imports as kiln::conv
// (ops_nn.cpp). Its row of graph/ops.def asks for a registration, which adds nothing.
#include "onnx/importer.h"

namespace kiln::onnx {

void register_depthwise_nhwc_ops(std::map<std::string, OpHandler>&) {}

}  // namespace kiln::onnx
