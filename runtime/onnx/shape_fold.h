// The parts of shape-subgraph folding (runtime/onnx/shape_fold*.cpp) that its files share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "onnx/importer.h"

namespace kiln::onnx::fold {

using Elems = std::vector<SymSize>;

int64_t numel(const Shape& dims);
Shape strides_of(const Shape& dims);  // row-major
/// The known value's elements as plain integers, or nothing when one is symbolic.
std::optional<Shape> concrete(const Val& v);

/// Element-wise nodes (arithmetic, comparisons, logic, Where) and the ones that fill or repeat
/// values (ConstantOfShape, Expand, Tile); false when `op` is not one of them or declines.
bool elementwise_op(NodeCtx& c, const std::string& op, const std::vector<const Val*>& in);
/// Nodes that move, select or combine known elements (Transpose, Squeeze, Unsqueeze, Concat,
/// Slice, ScatterND, reductions, Cast to bool, Range).
bool layout_op(NodeCtx& c, const std::string& op, const std::vector<const Val*>& in);

}  // namespace kiln::onnx::fold
