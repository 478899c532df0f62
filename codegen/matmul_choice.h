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

/// Cost estimate of one matmul at the hint sizes, in milliseconds, from the device's measured
/// rates (MatmulRates, filled by runtime/exec/calibration.h) scaled by the fraction of each tile
/// or row block that holds real rows and columns: a 4-row batch fills an eighth of a 32-row
/// tile. A kernel the device has no rate for costs infinity.
///
/// Without measured rates there is no estimate (the times stay 0, `measured` false) and the
/// choice is structural: the row-block kernel wherever it applies, and A stored whenever that
/// makes it apply. No rate measured on one driver stands in for another's.
struct MatmulEstimate {
  double tiled_ms = 0;     // the tiled kernel, batch by batch as the graph spells it
  double rowblock_ms = 0;  // the row-block kernel over A's rows flattened into M
  double store_a_ms = 0;   // one elementwise kernel storing A row-major
  double store_b_ms = 0;   // one elementwise kernel storing B (a 2-D operand)
  int64_t rows_per_batch = 0, batches = 0;
  bool measured = false;  // the times come from measured rates
};
MatmulEstimate estimate_matmul(const Graph& g, const Node& mm, const MatmulRates& rates);

/// Rows of C per invocation of the row-block kernel for a product of `m` rows at the sizes being
/// compiled: 32, or the power of two at or above `m` when `m` is at most 16 (a linear layer at
/// batch 1, a 1x1 conv on a 2x2 map), so that a short product does not compute a 32-row block;
/// at least 8 when M is symbolic (`m_symbolic`), since later calls may bring more rows.
uint32_t rowblock_rows(int64_t m, bool m_symbolic);

/// The shape and dtype conditions of the row-block kernel, whatever A's storage: f32, B 2-D
/// (shared by every row of A), A without transpose and of rank >= 2, K a constant multiple of 4
/// (and N too for A·B).
bool rowblock_shape_ok(const Graph& g, const Node& mm);

/// Whether A would need storing for the row-block kernel to read it: true when A is neither a
/// graph source nor stored (through unstored reshapes), e.g. a permuted view or elementwise
/// arithmetic folded into the loads.
bool operand_needs_store(const Graph& g, const FusionDecision& d, NodeId operand);

/// Which operands of a matmul the rule stores.
struct OperandStores {
  bool a = false, b = false;
};

/// The rule: store `mm`'s A and/or B operand (whichever is not stored) when the row-block
/// kernel could then run the product and either no rates are measured (structural rule) or the
/// estimate says storing plus the row-block product is no slower than the tiled product (B: a
/// conv weight padded with zero columns by the device lowering). `rowblock`: whether the target
/// runs the row-block kernel at all. Fills `*note` with the reason either way.
OperandStores rule_matmul_operand(const Graph& g, const FusionDecision& d, const Node& mm,
                                  bool rowblock, const MatmulRates& rates, std::string* note);

/// "row-block" or "tiled (why)" with the estimate and which rates it used (measured on this
/// device, or the structural rule), for the fusion log of each matmul.
std::string matmul_kernel_note(const Graph& g, const FusionDecision& d, const Node& mm,
                               bool rowblock, NodeId epilogue_root, const MatmulRates& rates);

/// Whether lowering runs `mm` (with its epilogue chain ending at `epilogue_root`, or -1) on the
/// row-block kernel: the target has it, the shape fits, both operands are stored in distinct
/// buffers, the epilogue neither reads an operand nor stores other than f32, and, with measured
/// rates, its estimate is no worse than the tiled kernel's.
bool matmul_uses_rowblock(const Graph& g, const FusionDecision& d, const Node& mm, bool rowblock,
                          NodeId epilogue_root, const MatmulRates& rates);

}  // namespace kiln
