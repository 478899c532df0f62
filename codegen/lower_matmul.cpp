// MatMul lowering: one tiled kernel per matmul (shaders/matmul.comp). The operands' elementwise
// producers, transposes and batch broadcasting fold into the generated kiln_load_a / kiln_load_b
// through the Emitter; nothing but the output is written to memory.
//
// Shapes follow the rule in graph/op_rules_nn.cpp (numpy.matmul): a is [..., M, K] (or [..., K, M]
// with trans_a), b is [..., K, N] (or [..., N, K] with trans_b); a 1-D a is a row [1, K] and a
// 1-D b a column [K, 1], whose added dim is absent from the output. The output is
// [batch..., M, N] minus those dims, so its row-major element (batch, i, j) always sits at
// batch * M * N + i * N + j.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "codegen/lower_internal.h"
#include "codegen/matmul_choice.h"

namespace kiln {
namespace {

/// Work split of one kernel: the C tile of a workgroup, the K step staged in shared memory, and
/// the register block of one invocation (local size = (TM / RM) * (TN / RN)).
struct TileConfig {
  uint32_t tm, tn, tk, rm, rn;
  uint32_t local_size() const { return (tm / rm) * (tn / rn); }
  uint32_t shared_bytes(uint32_t elem) const { return (tk * (tm + 1) + tk * tn) * elem; }
};

constexpr TileConfig kLargeTile{64, 64, 32, 8, 8};  // 64 invocations, 8x8 each
constexpr TileConfig kSmallTile{32, 32, 16, 4, 4};  // 64 invocations, 4x4 each

/// The operand's shape as the product sees it, split into batch dims and the matrix dims
/// (rows, cols) after the rule's 1-D promotion and the transpose.
template <typename S>
struct Operand {
  S batch;
  typename S::value_type rows = 1, cols = 1;
};

/// For the symbolic shapes (SymShape) and for the hints (Shape: tile choice only).
template <typename S>
Operand<S> operand_of(const S& s, bool trans, bool is_a) {
  Operand<S> o;
  if (s.size() == 1) {
    o.rows = is_a ? 1 : s[0];
    o.cols = is_a ? s[0] : 1;
    return o;
  }
  o.batch.assign(s.begin(), s.end() - 2);
  o.rows = trans ? s.back() : s[s.size() - 2];
  o.cols = trans ? s[s.size() - 2] : s.back();
  return o;
}

/// numpy broadcast of two batch shapes (already checked by the shape rule; a symbol is never 1).
SymShape broadcast_batch(const SymShape& a, const SymShape& b) {
  SymShape out(std::max(a.size(), b.size()), SymInt(1));
  for (size_t d = 0; d < out.size(); ++d) {
    size_t from_end = out.size() - d;
    SymInt da = from_end <= a.size() ? a[a.size() - from_end] : SymInt(1);
    SymInt db = from_end <= b.size() ? b[b.size() - from_end] : SymInt(1);
    out[d] = is_const(da, 1) ? db : da;
  }
  return out;
}

std::string u32(int64_t v) {
  return std::to_string(v) + "u";
}

/// Emits `ACC_T name(uint batch, uint p, uint q)` returning `operand` at the index assembled from
/// the batch (decomposed over the output's batch shape, broadcast to the operand's batch dims) and
/// the matrix dims: `first`, `second` are the parameter names in the operand's memory order.
std::string load_function(Emitter& e, const Graph& g, NodeId operand, const SymShape& out_batch,
                          const std::string& prefix, const std::string& name,
                          const std::string& params, const std::string& first,
                          const std::string& second, DType acc) {
  const Node& src = g.node(operand);
  const SymShape& s = src.sym;
  Index index;
  if (s.size() == 1) {
    index.push_back({first, 0});
  } else {
    Index bi = e.decompose("batch", out_batch, prefix, 0);
    SymShape in_batch(s.begin(), s.end() - 2);
    index = Emitter::broadcast_index(bi, out_batch, in_batch);
    index.push_back({first, 0});
    index.push_back({second, 0});
  }
  std::string v = glsl_convert(e.value(operand, index), src.meta.dtype, acc);
  std::string body = e.take_body();
  e.reset_scope();
  return std::string(glsl_compute_type(acc)) + " " + name + "(" + params + ") {\n" + body +
         "  return " + v + ";\n}\n\n";
}

TileConfig choose_tile(Dim m, Dim n, uint32_t elem, const TargetCaps& caps) {
  bool large = m >= kLargeTile.tm && n >= kLargeTile.tn &&
               caps.max_workgroup_invocations >= kLargeTile.local_size() &&
               kLargeTile.shared_bytes(elem) <= caps.max_shared_memory;
  return large ? kLargeTile : kSmallTile;
}

}  // namespace

std::string matmul_output_value(Emitter& e, const Graph& g, NodeId matmul, NodeId epilogue_root,
                                const std::string& linear, const std::string& acc, DType acc_type,
                                std::string* value) {
  const DType mm = g.node(matmul).meta.dtype;
  std::string v = glsl_convert(acc, acc_type, mm);
  if (epilogue_root >= 0) {
    e.set_override(matmul, v);
    Index index = e.decompose(linear, g.node(epilogue_root).sym, "ep", 0);
    v = e.value(epilogue_root, index);
  }
  *value = v;  // (an f16 output is rounded by the store: glsl_store)
  std::string body = e.take_body();
  e.reset_scope();
  return body;
}

// An epilogue kernel computes the matmul too: it is among the fused nodes, and named for both.
void mark_epilogue(Kernel& k, const Node& matmul, const Node& root) {
  k.fused_nodes.push_back(matmul.id);
  std::sort(k.fused_nodes.begin(), k.fused_nodes.end());
  k.name = std::string(op_name(matmul.op)) + "_" + op_name(root.op);
}

Expected<Kernel> matmul_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt, NodeId epilogue_root) {
  const Node& n = g.node(root);
  if (matmul_uses_rowblock(g, fusion, n, rowblock_supported(opt.caps), epilogue_root,
                           opt.caps.matmul))
    return matmul_rowblock_kernel(g, fusion, root, opt, epilogue_root);
  const NodeId a_id = n.inputs[0], b_id = n.inputs[1];
  const SymShape &sa = g.node(a_id).sym, &sb = g.node(b_id).sym;
  const auto a = operand_of(sa, n.attrs.trans_a, true);
  const auto b = operand_of(sb, n.attrs.trans_b, false);
  const SymInt m = a.rows, k = a.cols, nn = b.cols;
  const SymShape batch = broadcast_batch(a.batch, b.batch);
  const SymInt batches = sym_numel(batch);
  // The tile is a speed decision: taken from the sizes at the hints.
  const Dim m_hint = operand_of(g.node(a_id).meta.shape, n.attrs.trans_a, true).rows;
  const Dim n_hint = operand_of(g.node(b_id).meta.shape, n.attrs.trans_b, false).cols;

  // Accumulator: float for f32/f16 outputs (f16 is stored rounded), else the integer output type
  // (two's complement wraparound, as the interpreter).
  const DType out = n.meta.dtype;
  const DType acc = is_floating(out) ? DType::kF32 : out;
  const std::string acc_t = glsl_compute_type(acc);

  const NodeId out_id = epilogue_root >= 0 ? epilogue_root : root;
  Emitter e(g, fusion, false);
  use_scalar_texels(e, opt.caps);
  e.set_root(out_id);
  e.bind_output(out_id);
  const bool ta = sa.size() > 1 && n.attrs.trans_a, tb = sb.size() > 1 && n.attrs.trans_b;
  // A 1-D operand is indexed by k alone (load_function passes `first` only).
  const std::string a_first = (sa.size() == 1 || ta) ? "k" : "i";
  const std::string b_first = (sb.size() == 1 || !tb) ? "k" : "j";
  std::string src = load_function(e, g, a_id, batch, "ba", "kiln_load_a",
                                  "uint batch, uint i, uint k", a_first, ta ? "i" : "k", acc);
  src += load_function(e, g, b_id, batch, "bb", "kiln_load_b", "uint batch, uint k, uint j",
                       b_first, tb ? "k" : "j", acc);
  std::string v;
  const std::string store_body = matmul_output_value(e, g, root, epilogue_root, "g", "v", acc, &v);
  src += "void kiln_store(uint batch, uint i, uint j, " + acc_t +
         " v) {\n  const uint g = batch * " + e.size(m * nn) + " + i * " + e.size(nn) + " + j;\n" +
         store_body + "  " + glsl_store("g", v, g.node(out_id).meta.dtype) + ";\n}\n";
  const std::string m_glsl = e.size(m), n_glsl = e.size(nn), k_glsl = e.size(k),
                    batch_glsl = e.size(batches);

  KILN_ASSIGN_OR_RETURN(Kernel kern,
                        start_kernel(e, g.node(out_id), KernelVariant::kMatmulTiled, opt.caps));
  if (epilogue_root >= 0) mark_epilogue(kern, n, g.node(epilogue_root));

  const uint32_t elem = acc == DType::kI64 ? 8 : 4;
  const TileConfig t = choose_tile(m_hint, n_hint, elem, opt.caps);
  kern.local_size = t.local_size();
  kern.groups = {groups_for(nn, t.tn), groups_for(m, t.tm), batches};
  // Per K tile: its staging loops, the tile's TILE_K steps and the tile loop itself (the loops
  // over THREAD_M x THREAD_N are unrolled; measured on lavapipe: TILE_K + 3 per tile).
  const uint32_t tile_trips = t.tk + 1 + (t.tm * t.tk + kern.local_size - 1) / kern.local_size +
                              (t.tk * t.tn + kern.local_size - 1) / kern.local_size;
  kern.loop_trips = groups_for(k, t.tk) * SymInt(tile_trips) + SymInt(1);
  const bool a_k_fast = !ta, b_j_fast = sb.size() > 1 && !tb;
  std::map<std::string, std::string> macros{{"KILN_LOCAL_SIZE", u32(kern.local_size)},
                                            {"KILN_M", m_glsl},
                                            {"KILN_N", n_glsl},
                                            {"KILN_K", k_glsl},
                                            {"KILN_BATCH", batch_glsl},
                                            {"ACC_T", acc_t},
                                            {"TILE_M", u32(t.tm)},
                                            {"TILE_N", u32(t.tn)},
                                            {"TILE_K", u32(t.tk)},
                                            {"THREAD_M", u32(t.rm)},
                                            {"THREAD_N", u32(t.rn)},
                                            {"KILN_A_K_FAST", a_k_fast ? "1" : "0"},
                                            {"KILN_B_J_FAST", b_j_fast ? "1" : "0"}};
  if (acc == DType::kI64 && int64_pairs())
    macros["KILN_MAD(acc, a, b)"] = "kiln_i64_add(acc, kiln_i64_mul(a, b))";
  KILN_ASSIGN_OR_RETURN(kern.glsl, kernel_source("matmul.comp", e, e.declarations() + "\n" + src,
                                                 std::move(macros), kern, opt.caps));
  return kern;
}

}  // namespace kiln
