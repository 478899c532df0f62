// Flash-style attention (FusionRule::kAttention): softmax(chain(Q·Kᵀ))·V as one kernel with an
// online softmax (shaders/attention.comp). The unrolled body is generated here: the query row
// and the accumulator live in registers as scalars, K and V rows are shared across a subgroup
// with subgroupShuffle, and the chain between the scores and the softmax (scale, mask, bias)
// is emitted as a function of (batch, i, j, dot). Q, K and V are read through their views and
// producers like any fused load, so head-split views of a projection cost no copy; the output
// is written either as the product [.., H, S, D] or, when the graph merges the heads next
// (permute(.., -2 <-> -3) + reshape), directly in the merged [.., S, H*D] layout.
#include <algorithm>
#include <string>

#include "codegen/lower_internal.h"

namespace kiln {
namespace {

constexpr uint32_t kKeyBlock = 4;  // keys per online-softmax step (one rescale per block)

std::string u(uint64_t v) {
  return std::to_string(v) + "u";
}
std::string num(size_t v) {
  return std::to_string(v);
}

/// The index of a matmul operand at (row, col) of its logical [.., rows, cols] matrix, with
/// `batch` the product's batch index; `trans` swaps row and col in the operand's own layout.
Index operand_index(const Index& batch, const SymShape& batch_shape, const IndexExpr& row,
                    const IndexExpr& col, const SymInt& rows, const SymInt& cols, bool trans,
                    const SymShape& operand_shape) {
  Index full = batch;
  SymShape out = batch_shape;
  full.push_back(trans ? col : row);
  full.push_back(trans ? row : col);
  out.push_back(trans ? cols : rows);
  out.push_back(trans ? rows : cols);
  return Emitter::broadcast_index(full, out, operand_shape);
}

/// A GLSL function `float name(uint bt, uint <a>, uint <b>)` returning `node` at the index that
/// `make` builds from the decomposed batch index and the two parameters.
template <typename Make>
std::string load_function(Emitter& e, const std::string& name, const std::string& a,
                          const std::string& b, const SymShape& batch_shape, NodeId node,
                          const Make& make) {
  const Index batch = e.decompose("bt", batch_shape, "bb", 0);
  const std::string v = e.value(node, make(batch, IndexExpr{a, 0}, IndexExpr{b, 0}));
  std::string f = "float " + name + "(uint bt, uint " + a + ", uint " + b + ") {\n" +
                  e.take_body() + "  return " + v + ";\n}\n\n";
  e.reset_scope();
  return f;
}

/// The unrolled kiln_attention body. `dh` / `dv`: head dims of Q·Kᵀ and of V (multiples of 8);
/// `lanes`: lanes sharing one K / V row, 8, or 4 on a device whose subgroups are 4 wide.
std::string attention_body(uint32_t dh, uint32_t dv, const std::string& sq, const std::string& sk,
                           uint32_t lanes) {
  std::string b;
  b += "void kiln_attention(uint bt, uint row) {\n";
  b += "  const uint lane = gl_SubgroupInvocationID & " + u(lanes - 1) + ";\n";
  b += "  const uint i = min(row, " + sq + " - 1u);\n";
  for (uint32_t d = 0; d < dh; ++d)
    b += "  const float q" + num(d) + " = kiln_q(bt, i, " + u(d) + ");\n";
  for (uint32_t d = 0; d < dv; ++d) b += "  float a" + num(d) + " = 0.0;\n";
  b += "  float m = -KILN_INF, l = 0.0;\n";
  b += "  for (uint j0 = 0u; j0 < " + sk + "; j0 += " + u(kKeyBlock) + ") {\n";
  for (uint32_t t = 0; t < kKeyBlock; ++t) {
    const std::string ts = num(t);
    b += "    const uint jk" + ts + " = min(j0 + " + u(t) + ", " + sk + " - 1u);\n";
    b += "    float s" + ts + ";\n    {\n";
    for (uint32_t c = 0; c < dh / lanes; ++c)
      b += "      const float k" + num(c) + " = kiln_k(bt, jk" + ts + ", lane + " + u(c * lanes) +
           ");\n";
    b += "      float dot = 0.0;\n";
    for (uint32_t d = 0; d < dh; ++d)
      b += "      dot = fma(q" + num(d) + ", subgroupShuffle(k" + num(d / lanes) + ", " +
           u(d % lanes) + "), dot);\n";
    b += "      s" + ts + " = mix(-KILN_INF, kiln_score(bt, i, jk" + ts + ", dot), j0 + " + u(t) +
         " < " + sk + ");\n    }\n";
  }
  b += "    const float mn = kiln_maximum(m, kiln_maximum(kiln_maximum(s0, s1), "
       "kiln_maximum(s2, s3)));\n";
  // A block whose scores are all -inf (so far) adds nothing: no exp(-inf - -inf) NaN.
  b += "    const bool dead = mn == -KILN_INF;\n";
  // Selects, not branches (kiln_common.glsl says why).
  b += "    const float corr = mix(kiln_exp_nan(m - mn), 1.0, dead);\n";
  for (uint32_t t = 0; t < kKeyBlock; ++t)
    b += "    const float p" + num(t) + " = mix(kiln_exp_nan(s" + num(t) + " - mn), 0.0, dead);\n";
  // Uniform across the subgroup, so the shuffles below still see every lane.
  b += "    if (subgroupAll(dead)) continue;\n";
  b += "    l = l * corr + ((p0 + p1) + (p2 + p3));\n    m = mn;\n";
  for (uint32_t d = 0; d < dv; ++d) b += "    a" + num(d) + " *= corr;\n";
  for (uint32_t t = 0; t < kKeyBlock; ++t) {
    const std::string ts = num(t);
    b += "    {\n";
    for (uint32_t c = 0; c < dv / lanes; ++c)
      b += "      const float v" + num(c) + " = kiln_v(bt, jk" + ts + ", lane + " + u(c * lanes) +
           ");\n";
    for (uint32_t d = 0; d < dv; ++d)
      b += "      a" + num(d) + " = fma(p" + ts + ", subgroupShuffle(v" + num(d / lanes) + ", " +
           u(d % lanes) + "), a" + num(d) + ");\n";
    b += "    }\n";
  }
  b += "  }\n";
  // l == 0: no keys (a matmul over an empty dim is 0) or every score -inf (softmax is NaN).
  b += "  if (row < " + sq + ") {\n";
  b += "    const float inv = 1.0 / l;\n";
  b += "    const bool empty = l == 0.0;\n";
  b += "    const float none = mix(uintBitsToFloat(0x7fc00000u), 0.0, " + sk + " == 0u);\n";
  for (uint32_t d = 0; d < dv; ++d)
    b += "    kiln_store(bt, i, " + u(d) + ", mix(a" + num(d) + " * inv, none, empty));\n";
  b += "  }\n}\n";
  return b;
}

}  // namespace

Expected<Kernel> attention_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                  const CodegenOptions& opt) {
  const Node& pv = g.node(fusion.attention_of[root]);
  const Node& sm = g.node(pv.inputs[0]);
  // The scores matmul: reached from the softmax input through the fused chain.
  NodeId qk_id = -1;
  for (std::vector<NodeId> stack = {sm.inputs[0]}; !stack.empty() && qk_id < 0;) {
    const Node& n = g.node(stack.back());
    stack.pop_back();
    if (n.op == OpKind::MatMul && fusion.rule[n.id] == FusionRule::kAttention)
      qk_id = n.id;
    else if (is_elementwise(n.op) && !fusion.materialize[n.id])
      stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
  }
  if (qk_id < 0)
    return internal_error("attention: no scores matmul under %" + std::to_string(sm.id));
  const Node& qk = g.node(qk_id);
  const Node &q = g.node(qk.inputs[0]), &k = g.node(qk.inputs[1]), &v = g.node(pv.inputs[1]);
  const size_t rank = sm.sym.size();
  const SymShape batch_shape(sm.sym.begin(), sm.sym.end() - 2);
  const SymInt sq_sym = sm.sym[rank - 2], sk_sym = sm.sym[rank - 1];
  const SymInt dh_sym = qk.attrs.trans_a ? q.sym[q.sym.size() - 2] : q.sym.back();
  const SymInt dv_sym = pv.sym.back();
  const auto dh = static_cast<uint32_t>(dh_sym.constant_value()),
             dv = static_cast<uint32_t>(dv_sym.constant_value());

  Emitter e(g, fusion, false);
  use_scalar_texels(e, opt.caps);
  e.set_root(root);
  e.bind_output(root);
  e.use_binding(0, false, true);
  std::string src;
  src += load_function(e, "kiln_q", "i", "d", batch_shape, q.id,
                       [&](const Index& bi, const IndexExpr& i, const IndexExpr& d) {
                         return operand_index(bi, batch_shape, i, d, sq_sym, dh_sym,
                                              qk.attrs.trans_a, q.sym);
                       });
  src += load_function(e, "kiln_k", "j", "d", batch_shape, k.id,
                       [&](const Index& bi, const IndexExpr& j, const IndexExpr& d) {
                         // Q·Kᵀ reads K as [.., keys, dh] with trans_b, else [.., dh, keys].
                         return operand_index(bi, batch_shape, j, d, sk_sym, dh_sym,
                                              !qk.attrs.trans_b, k.sym);
                       });
  src += load_function(e, "kiln_v", "j", "d", batch_shape, v.id,
                       [&](const Index& bi, const IndexExpr& j, const IndexExpr& d) {
                         return operand_index(bi, batch_shape, j, d, sk_sym, dv_sym,
                                              pv.attrs.trans_b, v.sym);
                       });
  {  // kiln_score: the chain between the scores and the softmax, at (batch, i, j).
    Index index = e.decompose("bt", batch_shape, "bb", 0);
    index.push_back({"i", 0});
    index.push_back({"j", 0});
    e.set_override(qk.id, "dot");
    const std::string s = e.value(sm.inputs[0], index);
    src += "float kiln_score(uint bt, uint i, uint j, float dot) {\n" + e.take_body() +
           "  return " + s + ";\n}\n\n";
    e.reset_scope();
  }
  {  // kiln_store: element (batch, i, d) of the product, at its place in the root's layout.
    Index index = e.decompose("bt", batch_shape, "bb", 0);
    index.push_back({"i", 0});
    index.push_back({"d", 0});
    std::string lin;
    if (root == pv.id) {
      lin = e.linear_index(pv.sym, index);
    } else {  // the heads-merging view: the permuted index, row-major in the permute's shape
      const Node& p = g.node(g.node(root).inputs[0]);
      Index permuted(index.size());
      for (size_t a = 0; a < permuted.size(); ++a) permuted[a] = index[p.attrs.dims[a]];
      lin = e.linear_index(p.sym, permuted);
    }
    src += "void kiln_store(uint bt, uint i, uint d, float v) {\n" + e.take_body() + "  b0.data[" +
           lin + "] = v;\n}\n\n";
    e.reset_scope();
  }
  SymInt batches = 1;
  for (const SymInt& s : batch_shape) batches = batches * s;
  const uint32_t local = sm.meta.shape[rank - 2] <= 32 ? 32 : 64;
  const SymInt row_blocks = groups_for(sq_sym, local);
  const std::string sq = e.size(sq_sym), sk = e.size(sk_sym), batches_glsl = e.size(batches),
                    row_blocks_glsl = e.size(row_blocks);
  src += attention_body(dh, dv, sq, sk, attention_lanes(opt.caps));

  KILN_ASSIGN_OR_RETURN(Kernel kern,
                        start_kernel(e, g.node(root), KernelVariant::kAttention, opt.caps));
  for (NodeId id : {qk.id, sm.id, pv.id, g.node(root).inputs[0]})
    if (std::find(kern.fused_nodes.begin(), kern.fused_nodes.end(), id) == kern.fused_nodes.end())
      kern.fused_nodes.push_back(id);
  std::sort(kern.fused_nodes.begin(), kern.fused_nodes.end());
  kern.name = "attention";
  kern.local_size = local;
  kern.groups = {row_blocks, batches, SymInt(1)};
  kern.loop_trips = groups_for(sk_sym, kKeyBlock) + SymInt(1);  // key blocks
  KILN_ASSIGN_OR_RETURN(kern.glsl, kernel_source("attention.comp", e, e.declarations() + "\n" + src,
                                                 {{"KILN_LOCAL_SIZE", u(local)},
                                                  {"KILN_BATCHES", batches_glsl},
                                                  {"KILN_ROW_BLOCKS", row_blocks_glsl}},
                                                 kern, opt.caps));
  return kern;
}

}  // namespace kiln
