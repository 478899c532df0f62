/// \file matmul_choice.h
/// Which kernel a matmul runs on, decided from what its operands are (their shapes, whether they
/// are stored row-major) rather than how the graph spelled them, with the cost estimate behind
/// the choice. The fusion pass asks it whether a matmul's A operand should be stored by its own
/// kernel (FusionRule::kMatmulOperand) so that the product runs on the row-block kernel; the
/// matmul lowering asks it which kernel to emit. Both record the same note in the fusion log.
#pragma once

#include <string>

#include "codegen/fusion.h"

namespace kiln {

/// Cost estimate of one matmul at the hint sizes, in milliseconds. Rates are the lavapipe
/// figures of docs/perf.md (row-block ~60 GFLOP/s, tiled ~5 GFLOP/s at full tiles, an
/// elementwise copy ~3 GB/s), scaled by the fraction of each tile or row block that holds real
/// rows and columns: a 4-row batch fills an eighth of a 32-row tile.
struct MatmulEstimate {
  double tiled_ms = 0;     // the tiled kernel, batch by batch as the graph spells it
  double rowblock_ms = 0;  // the row-block kernel over A's rows flattened into M
  double store_a_ms = 0;   // one elementwise kernel storing A row-major
  int64_t rows_per_batch = 0, batches = 0;
};
MatmulEstimate estimate_matmul(const Graph& g, const Node& mm);

/// The shape and dtype conditions of the row-block kernel, whatever A's storage: f32, B 2-D
/// (shared by every row of A), A without transpose and of rank >= 2, K a constant multiple of 4
/// (and N too for A·B).
bool rowblock_shape_ok(const Graph& g, const Node& mm);

/// Whether A would need storing for the row-block kernel to read it: true when A is neither a
/// graph source nor stored (through unstored reshapes), e.g. a permuted view or elementwise
/// arithmetic folded into the loads.
bool operand_needs_store(const Graph& g, const FusionDecision& d, NodeId operand);

/// The rule: store `mm`'s A operand when the row-block kernel could then run the product and
/// the estimate says storing plus the row-block product beats the tiled product. `rowblock`:
/// whether the target runs the row-block kernel at all. Fills `*note` with the reason either way.
bool rule_matmul_operand(const Graph& g, const FusionDecision& d, const Node& mm, bool rowblock,
                         std::string* note);

/// "row-block" or "tiled (why)" with the estimate, for the fusion log of each matmul.
std::string matmul_kernel_note(const Graph& g, const FusionDecision& d, const Node& mm,
                               bool rowblock, NodeId epilogue_root);

/// Whether lowering runs `mm` (with its epilogue chain ending at `epilogue_root`, or -1) on the
/// row-block kernel: the target has it, the shape fits, both operands are stored in distinct
/// buffers, and the epilogue neither reads an operand nor stores other than f32.
bool matmul_uses_rowblock(const Graph& g, const FusionDecision& d, const Node& mm, bool rowblock,
                          NodeId epilogue_root);

}  // namespace kiln
