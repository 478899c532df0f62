#include "codegen/matmul_choice.h"

#include <cstdio>
#include <limits>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr int64_t kTiledTile = 32;     // the small tile's rows and columns
constexpr int64_t kRowBlockRows = 32;  // rows per row-block invocation (calibrated)

int64_t round_up(int64_t v, int64_t m) {
  return v <= 0 ? m : (v + m - 1) / m * m;
}

/// Fraction of work units of size `unit` that hold real items when `v` items are spread on them.
double fill(int64_t v, int64_t unit) {
  return v <= 0 ? 1.0 : static_cast<double>(v) / static_cast<double>(round_up(v, unit));
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.3g ms" : "%.0f ms", v);
  return buf;
}

bool is_source(const Node& n) {
  return n.op == OpKind::Input || n.op == OpKind::Constant;
}

/// Why the row-block kernel cannot run `mm` whatever its operands' storage, or "" if it can.
const char* shape_reason(const Graph& g, const Node& mm) {
  const Node &a = g.node(mm.inputs[0]), &b = g.node(mm.inputs[1]);
  if (mm.meta.dtype != DType::kF32 || a.meta.dtype != DType::kF32 || b.meta.dtype != DType::kF32)
    return "not f32";
  if (mm.attrs.trans_a) return "A transposed";
  if (a.sym.size() < 2) return "A is a vector";
  if (b.sym.size() != 2) return "B has batch dims";
  const SymInt& k = a.sym.back();
  if (!k.is_constant() || k.constant_value() <= 0 || k.constant_value() % 4 != 0)
    return "K not a constant multiple of 4";
  if (!mm.attrs.trans_b) {
    const SymInt& cols = b.sym[1];
    if (!cols.is_constant() || cols.constant_value() <= 0 || cols.constant_value() % 4 != 0)
      return "N not a constant multiple of 4";
  }
  return "";
}

/// True when the epilogue chain of `root` loads one of the matmul's operands (x + x·W): the
/// row-block kernel binds its operands as vec4 or texel buffers and may window them by rows, so
/// such an epilogue goes through the tiled kernel.
bool epilogue_reads_operands(const Graph& g, const FusionDecision& fusion, NodeId root,
                             const Node& matmul) {
  const NodeId a = storage_of(g, fusion, matmul.inputs[0]),
               b = storage_of(g, fusion, matmul.inputs[1]);
  std::vector<NodeId> stack = {root};
  std::vector<bool> seen(g.size(), false);  // an epilogue region may read a node twice
  while (!stack.empty()) {
    const Node& n = g.node(stack.back());
    stack.pop_back();
    if (n.id == matmul.id || seen[n.id]) continue;
    seen[n.id] = true;
    if (n.id == matmul.inputs[0] || n.id == matmul.inputs[1] || n.id == a || n.id == b) return true;
    if (n.id != root && fusion.materialize[n.id]) continue;
    stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
  }
  return false;
}

/// Why lowering sends `mm` to the tiled kernel, or "" when it runs on the row-block kernel.
std::string tiled_reason(const Graph& g, const FusionDecision& d, const Node& mm, bool rowblock,
                         NodeId epilogue_root) {
  if (!rowblock) return "target lacks subgroup shuffles";
  if (const char* r = shape_reason(g, mm); *r) return r;
  if (operand_needs_store(g, d, mm.inputs[0])) return "A not stored";
  if (operand_needs_store(g, d, mm.inputs[1])) return "B not stored";
  if (storage_of(g, d, mm.inputs[0]) == storage_of(g, d, mm.inputs[1]))
    return "A and B share a buffer";
  if (epilogue_root >= 0 && g.node(epilogue_root).meta.dtype != DType::kF32)
    return "epilogue stores other than f32";
  if (epilogue_root >= 0 && epilogue_reads_operands(g, d, epilogue_root, mm))
    return "epilogue reads an operand";
  return "";
}

std::string estimate_text(const MatmulEstimate& e, const MatmulRates& rates) {
  const std::string rows =
      std::to_string(e.batches) + " x " + std::to_string(e.rows_per_batch) + " rows";
  if (rates.force != MatmulRates::Force::kNone) return "kernel forced (calibration), " + rows;
  if (!e.measured) return "structural rule (no measured rates), " + rows;
  return "rates measured on this device: est. tiled " + ms(e.tiled_ms) + " (" + rows +
         "), row-block " + ms(e.rowblock_ms) + ", store A " + ms(e.store_a_ms) + ", store B " +
         ms(e.store_b_ms);
}

/// Whether the estimate sends a product the row-block kernel could run to it: always under the
/// structural rule, by the measured rates otherwise. `store_a`, `store_b`: A, B must be stored
/// first.
bool rowblock_wins(const Graph& g, const Node& mm, const MatmulRates& rates, bool store_a,
                   bool store_b = false) {
  if (rates.max_binding_bytes > 0) {  // only the row-block kernel splits an oversized binding
    for (const TensorMeta* meta :
         {&mm.meta, &g.node(mm.inputs[0]).meta, &g.node(mm.inputs[1]).meta})
      if (static_cast<uint64_t>(meta->nbytes()) > rates.max_binding_bytes) return true;
  }
  if (rates.force != MatmulRates::Force::kNone) return rates.force == MatmulRates::Force::kRowBlock;
  if (!rates.measured) return true;
  const MatmulEstimate e = estimate_matmul(g, mm, rates);
  return e.rowblock_ms + (store_a ? e.store_a_ms : 0.0) + (store_b ? e.store_b_ms : 0.0) <=
         e.tiled_ms;
}

}  // namespace

MatmulEstimate estimate_matmul(const Graph& g, const Node& mm, const MatmulRates& rates) {
  const Shape &a = g.node(mm.inputs[0]).meta.shape, &b = g.node(mm.inputs[1]).meta.shape;
  MatmulEstimate e;
  const bool ta = mm.attrs.trans_a && a.size() > 1, tb = mm.attrs.trans_b && b.size() > 1;
  const int64_t m = a.size() == 1 ? 1 : (ta ? a.back() : a[a.size() - 2]);
  const int64_t k = ta ? a[a.size() - 2] : a.back();
  const int64_t n = b.size() == 1 ? 1 : (tb ? b[b.size() - 2] : b.back());
  // The output is [batch..., M, N] minus the dims of 1-D operands.
  const int64_t batches = m * n > 0 ? mm.meta.numel() / (m * n) : 0;
  e.rows_per_batch = m;
  e.batches = batches;
  if (!rates.measured) return e;
  e.measured = true;
  const double flops = 2.0 * static_cast<double>(batches * m) * static_cast<double>(n * k);
  const double inf = std::numeric_limits<double>::infinity();
  auto time = [&](double work, double rate) { return rate > 0 ? work / rate : inf; };
  e.tiled_ms = time(flops, rates.tiled_flops_per_ms * fill(m, kTiledTile) * fill(n, kTiledTile));
  // Calibration times the 32-row block, so a smaller block (rowblock_rows) is credited with no
  // gain of its own: the estimate is the 32-row block's at its fill, an upper bound.
  e.rowblock_ms = time(flops, rates.rowblock_flops_per_ms * fill(batches * m, kRowBlockRows));
  e.store_a_ms = time(8.0 * static_cast<double>(batches * m * k), rates.copy_bytes_per_ms);
  e.store_b_ms = time(8.0 * static_cast<double>(n * k), rates.copy_bytes_per_ms);
  return e;
}

uint32_t rowblock_rows(int64_t m, bool m_symbolic) {
  uint32_t rows = m_symbolic ? 8 : 1;
  while (rows < kRowBlockRows && rows < m) rows *= 2;
  return rows <= 16 ? rows : 32;
}

bool rowblock_shape_ok(const Graph& g, const Node& mm) {
  return *shape_reason(g, mm) == '\0';
}

bool operand_needs_store(const Graph& g, const FusionDecision& d, NodeId operand) {
  const NodeId s = storage_of(g, d, operand);
  return !is_source(g.node(s)) && !d.materialize[s];
}

OperandStores rule_matmul_operand(const Graph& g, const FusionDecision& d, const Node& mm,
                                  bool rowblock, const MatmulRates& rates, std::string* note) {
  note->clear();
  if (mm.op != OpKind::MatMul || !rowblock || !rowblock_shape_ok(g, mm)) return {};
  const NodeId a = mm.inputs[0], b = mm.inputs[1];
  const bool need_a = operand_needs_store(g, d, a), need_b = operand_needs_store(g, d, b);
  if (!need_a && !need_b) return {};
  if (a == b || storage_of(g, d, b) == a || storage_of(g, d, a) == b) return {};
  const bool store = rowblock_wins(g, mm, rates, need_a, need_b);
  const std::string which = need_a && need_b ? "A and B" : need_a ? "A" : "B";
  *note = (store ? "store " + which + " for the row-block kernel" : which + " left unstored") +
          ": " + estimate_text(estimate_matmul(g, mm, rates), rates);
  if (!store) return {};
  return {need_a, need_b};
}

bool matmul_uses_rowblock(const Graph& g, const FusionDecision& d, const Node& mm, bool rowblock,
                          NodeId epilogue_root, const MatmulRates& rates) {
  return tiled_reason(g, d, mm, rowblock, epilogue_root).empty() &&
         rowblock_wins(g, mm, rates, false);
}

std::string matmul_kernel_note(const Graph& g, const FusionDecision& d, const Node& mm,
                               bool rowblock, NodeId epilogue_root, const MatmulRates& rates) {
  std::string why = tiled_reason(g, d, mm, rowblock, epilogue_root);
  if (why.empty() && !rowblock_wins(g, mm, rates, false))
    why = rates.force == MatmulRates::Force::kTiled ? "forced" : "estimated faster";
  return (why.empty() ? std::string("row-block kernel") : "tiled kernel (" + why + ")") + "; " +
         estimate_text(estimate_matmul(g, mm, rates), rates);
}

}  // namespace kiln
