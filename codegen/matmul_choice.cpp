#include "codegen/matmul_choice.h"

#include <cstdio>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

// Rates on lavapipe, 2 cores (docs/perf.md): the row-block kernel at 1024³ and the tiled kernel
// at full tiles, and an elementwise vec4 copy (read + write).
constexpr double kRowBlockFlopsPerMs = 60e6;
constexpr double kTiledFlopsPerMs = 5e6;
constexpr double kCopyBytesPerMs = 3e6;
constexpr int64_t kTiledTile = 32;     // the small tile's rows and columns
constexpr int64_t kRowBlockRows = 32;  // rows per row-block invocation

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
  while (!stack.empty()) {
    const Node& n = g.node(stack.back());
    stack.pop_back();
    if (n.id == matmul.id) continue;
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

std::string estimate_text(const MatmulEstimate& e) {
  return "est. tiled " + ms(e.tiled_ms) + " (" + std::to_string(e.batches) + " x " +
         std::to_string(e.rows_per_batch) + " rows), row-block " + ms(e.rowblock_ms) +
         ", store A " + ms(e.store_a_ms);
}

}  // namespace

MatmulEstimate estimate_matmul(const Graph& g, const Node& mm) {
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
  const double flops = 2.0 * static_cast<double>(batches * m) * static_cast<double>(n * k);
  e.tiled_ms = flops / (kTiledFlopsPerMs * fill(m, kTiledTile) * fill(n, kTiledTile));
  e.rowblock_ms = flops / (kRowBlockFlopsPerMs * fill(batches * m, kRowBlockRows));
  e.store_a_ms = 8.0 * static_cast<double>(batches * m * k) / kCopyBytesPerMs;
  return e;
}

bool rowblock_shape_ok(const Graph& g, const Node& mm) {
  return *shape_reason(g, mm) == '\0';
}

bool operand_needs_store(const Graph& g, const FusionDecision& d, NodeId operand) {
  const NodeId s = storage_of(g, d, operand);
  return !is_source(g.node(s)) && !d.materialize[s];
}

bool rule_matmul_operand(const Graph& g, const FusionDecision& d, const Node& mm, bool rowblock,
                         std::string* note) {
  note->clear();
  if (mm.op != OpKind::MatMul || !rowblock || !rowblock_shape_ok(g, mm)) return false;
  const NodeId a = mm.inputs[0];
  if (!operand_needs_store(g, d, a) || operand_needs_store(g, d, mm.inputs[1])) return false;
  if (a == mm.inputs[1] || storage_of(g, d, mm.inputs[1]) == a) return false;
  const MatmulEstimate e = estimate_matmul(g, mm);
  const bool store = e.rowblock_ms + e.store_a_ms < e.tiled_ms;
  *note = std::string(store ? "store A for the row-block kernel" : "A left unstored") + ": " +
          estimate_text(e);
  return store;
}

bool matmul_uses_rowblock(const Graph& g, const FusionDecision& d, const Node& mm, bool rowblock,
                          NodeId epilogue_root) {
  return tiled_reason(g, d, mm, rowblock, epilogue_root).empty();
}

std::string matmul_kernel_note(const Graph& g, const FusionDecision& d, const Node& mm,
                               bool rowblock, NodeId epilogue_root) {
  const std::string why = tiled_reason(g, d, mm, rowblock, epilogue_root);
  const MatmulEstimate e = estimate_matmul(g, mm);
  return (why.empty() ? std::string("row-block kernel") : "tiled kernel (" + why + ")") + "; " +
         estimate_text(e);
}

}  // namespace kiln
