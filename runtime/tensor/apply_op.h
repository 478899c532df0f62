/// \file apply_op.h
/// The single entry point of every Tensor op, and the one internal header the ONNX importer
/// uses: an op of the table (graph/ops.def) by kind, with its attributes. Ops with a public
/// function (kiln/tensor.h and the op headers) call it; a kernel op without one (MaxUnpool) is
/// reached through it by its front end.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "graph/op.h"
#include "kiln/tensor.h"

namespace kiln {

/// Runs or records `op`: inside a trace a node of the trace's graph, else the op run eagerly on
/// its inputs' device. `target`: the symbolic output shape of Reshape/Expand/Full or length of
/// Arange (see Graph::add).
Tensor apply_op(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs, const Loc& loc,
                SymShape target = {});

}  // namespace kiln
