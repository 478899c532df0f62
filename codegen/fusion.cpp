#include "codegen/fusion.h"

#include <algorithm>

#include "codegen/emit.h"
#include "codegen/matmul_choice.h"

namespace kiln {

const char* fusion_rule_name(FusionRule rule) {
  switch (rule) {
    case FusionRule::kGraphOutput:
      return "graph_output";
    case FusionRule::kReduceBoundary:
      return "reduce_boundary";
    case FusionRule::kOwnKernel:
      return "own_kernel";
    case FusionRule::kMultiConsumer:
      return "multi_consumer";
    case FusionRule::kUnfused:
      return "unfused";
    case FusionRule::kInlinePointwise:
      return "inline_pointwise";
    case FusionRule::kInlineView:
      return "inline_view";
    case FusionRule::kInlineLiteral:
      return "inline_literal";
    case FusionRule::kMatmulEpilogue:
      return "matmul_epilogue";
    case FusionRule::kEpilogueRoot:
      return "epilogue_root";
    case FusionRule::kAttention:
      return "attention";
    case FusionRule::kLayerNorm:
      return "layer_norm";
    case FusionRule::kMatmulOperand:
      return "matmul_operand";
    case FusionRule::kMatmulLayout:
      return "matmul_layout";
    case FusionRule::kWindowEpilogue:
      return "window_epilogue";
  }
  return "?";
}

bool rule_inline_view(const Node& n) {
  return is_movement(n.op);
}
bool rule_inline_literal(const Node& n) {
  return n.op == OpKind::Full;
}
bool rule_own_kernel(const Node& n) {
  if (is_kernel_op(n.op)) return true;
  switch (op_category(n.op)) {
    case OpCategory::kContraction:
    case OpCategory::kNormalization:
    case OpCategory::kWindow:
    case OpCategory::kScatter:
    case OpCategory::kSpectral:
    case OpCategory::kCompaction:
      return true;
    default:
      return false;
  }
}
bool rule_multi_consumer(const Node& n, int uses) {
  return (is_elementwise(n.op) || is_index_op(n.op)) && uses > 1;
}

NodeId rule_matmul_epilogue(const Graph& graph, const FusionDecision& d, const Node& root,
                            const std::vector<int>& uses) {
  if (!is_elementwise(root.op)) return -1;
  // Depth-first through the root's inline elementwise producers of the root's shape (each once:
  // an epilogue region may read a node twice).
  std::vector<NodeId> stack(root.inputs.begin(), root.inputs.end());
  std::vector<bool> seen(graph.size(), false);
  while (!stack.empty()) {
    const Node& n = graph.node(stack.back());
    stack.pop_back();
    if (seen[n.id]) continue;
    seen[n.id] = true;
    if (!(n.sym == root.sym) || n.meta.dtype != root.meta.dtype) continue;
    if (op_category(n.op) == OpCategory::kContraction) {
      if (uses[n.id] == 1 && d.rule[n.id] == FusionRule::kOwnKernel) return n.id;
      continue;
    }
    if (d.materialize[n.id] || !is_elementwise(n.op)) continue;
    stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
  }
  return -1;
}

namespace {

/// Per node, the nodes that read it directly (a view counted once, not per consumer).
std::vector<int> direct_readers(const Graph& g) {
  std::vector<int> n(g.size(), 0);
  for (const Node& c : g.nodes())
    for (NodeId in : c.inputs) ++n[static_cast<size_t>(in)];
  return n;
}

constexpr int64_t kMaxAttentionHeadDim = 128;

bool is_f32(const Graph& g, NodeId id) {
  return g.node(id).meta.dtype == DType::kF32;
}

/// A head dim the attention kernel keeps in registers: a constant multiple of 8 up to 128.
bool attention_head_dim(const SymInt& d) {
  return d.is_constant() && d.constant_value() > 0 && d.constant_value() % 8 == 0 &&
         d.constant_value() <= kMaxAttentionHeadDim;
}

/// Per node, the first node that reads it (-1 if none): one pass, so that the rules below ask
/// for a node's single consumer in constant time.
std::vector<NodeId> first_consumers(const Graph& g) {
  std::vector<NodeId> first(g.size(), -1);
  for (const Node& n : g.nodes())
    for (NodeId in : n.inputs)
      if (first[in] < 0) first[in] = n.id;
  return first;
}

/// The node reading `id` when `id` has exactly one use, else -1.
NodeId sole_consumer(NodeId id, const std::vector<int>& uses, const std::vector<NodeId>& first) {
  return uses[id] == 1 ? first[id] : -1;
}

/// permute(.., -2 <-> -3) then any reshape of it: [.., H, S, D] -> [.., S, H*D] as nn writes
/// it, or [S, B*H, D] -> [S*B, H*D] as PyTorch's exporter does. A reshape keeps the row-major
/// order of the permuted tensor, which the attention kernel writes.
bool merges_heads(const Node& p, const Node& r) {
  const size_t rank = p.sym.size();
  if (p.op != OpKind::Permute || rank < 3 || r.op != OpKind::Reshape) return false;
  for (size_t i = 0; i < rank; ++i) {
    const size_t want = i == rank - 3 ? rank - 2 : i == rank - 2 ? rank - 3 : i;
    if (p.attrs.dims[i] != static_cast<int64_t>(want)) return false;
  }
  return sym_numel(r.sym) == sym_numel(p.sym);
}

}  // namespace

NodeId rule_matmul_layout(const Graph& g, const FusionDecision& d, const Node& p,
                          const std::vector<bool>& is_output, const std::vector<int>& readers,
                          bool rowblock, const MatmulRates& rates) {
  if (!rowblock || p.op != OpKind::Permute || p.attrs.dims != std::vector<int64_t>{0, 3, 1, 2} ||
      p.meta.dtype != DType::kF32)
    return -1;
  const Node& r = g.node(p.inputs[0]);
  if (r.op != OpKind::Reshape || d.materialize[r.id] || is_output[r.id] || r.sym.size() != 4 ||
      readers[r.id] != 1)
    return -1;
  // Planes of a static whole number of vec4s, stored a vec4 per 4 rows. Under a symbolic plane
  // size the kernel would hold the vec4 and the per-row stores behind a branch on it, and
  // llvmpipe runs both sides of a branch under masks: the NHWC product's row stores were
  // faster there (measured: mobilenet_v3's 1x1 conv products 1.5-2x slower).
  const SymInt plane = r.sym[1] * r.sym[2];
  if (!plane.is_constant() || plane.constant_value() % 4 != 0) return -1;
  const Node& x = g.node(r.inputs[0]);
  if (!d.materialize[x.id] || is_output[x.id] || x.sym.size() != 2 || x.meta.dtype != DType::kF32 ||
      !(x.sym[1] == r.sym[3]) || !(sym_numel(x.sym) == sym_numel(r.sym)) ||
      readers[x.id] != 1)
    return -1;
  const NodeId mm_id = layout_matmul(d, x.id);
  const Node& mm = g.node(mm_id);
  if (mm.op != OpKind::MatMul || !mm.attrs.trans_b || mm.attrs.trans_a ||
      g.node(mm.inputs[0]).sym.size() != 2 || g.node(mm.inputs[1]).sym.size() != 2 ||
      (mm_id == x.id && d.rule[mm_id] != FusionRule::kOwnKernel))
    return -1;
  if (!matmul_uses_rowblock(g, d, mm, rowblock, mm_id == x.id ? NodeId{-1} : x.id, rates))
    return -1;
  // C is bound whole (only A is split into row windows): within one binding at the hints.
  if (rates.max_binding_bytes > 0 &&
      static_cast<uint64_t>(p.meta.numel()) * 4 > rates.max_binding_bytes)
    return -1;
  return x.id;
}

std::optional<AttentionMatch> rule_attention(const Graph& g, const FusionDecision& d,
                                             const Node& pv, const std::vector<int>& uses,
                                             const std::vector<NodeId>& first) {
  if (pv.op != OpKind::MatMul || !is_f32(g, pv.id)) return std::nullopt;
  const Node& sm = g.node(pv.inputs[0]);
  const size_t rank = sm.sym.size();
  if (sm.op != OpKind::Softmax || uses[sm.id] != 1 || pv.inputs[1] == sm.id || pv.attrs.trans_a ||
      rank < 2 || !is_f32(g, sm.id) || !is_f32(g, pv.inputs[1]))
    return std::nullopt;
  const int64_t axis =
      sm.attrs.axis < 0 ? sm.attrs.axis + static_cast<int64_t>(rank) : sm.attrs.axis;
  if (axis != static_cast<int64_t>(rank) - 1) return std::nullopt;
  // Q·Kᵀ through elementwise nodes of the scores' shape, each used once and not stored.
  // A chain holding a second contraction (Q·Kᵀ + Q·Rᵀ) is not matched: the kernel computes
  // exactly one product per score.
  NodeId qk = -1;
  int contractions = 0;
  std::vector<NodeId> stack = {sm.inputs[0]};
  while (!stack.empty()) {
    const Node& n = g.node(stack.back());
    stack.pop_back();
    if (!(n.sym == sm.sym) || !is_f32(g, n.id)) continue;
    if (n.op == OpKind::MatMul) {
      ++contractions;
      if (uses[n.id] == 1 && d.rule[n.id] == FusionRule::kOwnKernel) qk = n.id;
      continue;
    }
    if (d.materialize[n.id] || !is_elementwise(n.op)) continue;
    stack.insert(stack.end(), n.inputs.begin(), n.inputs.end());
  }
  if (qk < 0 || contractions != 1) return std::nullopt;
  const Node& s = g.node(qk);
  const Node &q = g.node(s.inputs[0]), &k = g.node(s.inputs[1]), &v = g.node(pv.inputs[1]);
  if (!is_f32(g, q.id) || !is_f32(g, k.id) || q.sym.size() < 2 || k.sym.size() < 2 ||
      v.sym.size() < 2)
    return std::nullopt;
  const SymInt& head = s.attrs.trans_a ? q.sym[q.sym.size() - 2] : q.sym.back();
  const SymInt& dv = pv.attrs.trans_b ? v.sym[v.sym.size() - 2] : v.sym.back();
  if (!attention_head_dim(head) || !attention_head_dim(dv)) return std::nullopt;
  if (!std::equal(pv.sym.begin(), pv.sym.end() - 2, sm.sym.begin(), sm.sym.end() - 2))
    return std::nullopt;
  AttentionMatch m;
  m.scores = qk;
  m.softmax = sm.id;
  m.output = pv.id;
  const NodeId p = sole_consumer(pv.id, uses, first);
  if (p >= 0 && !d.materialize[p]) {
    const NodeId r = sole_consumer(p, uses, first);
    if (r >= 0 && merges_heads(g.node(p), g.node(r))) m.permute = p, m.reshape = r;
  }
  return m;
}

namespace {

/// The elementwise nodes after matmul `mm` that its kernel can apply before its store: nodes
/// of its shape and dtype, each reading a node of the region (and other operands, never the
/// matmul's own A or B), such that only the last one is read from outside the region (or is a
/// graph output) and every other node of the region, the matmul included, is read only inside
/// it. A chain (a bias, then an activation) is such a region; so is a HardSwish
/// x · clip(x / 6 + 1/2, 0, 1) or a GELU x · (1 + erf(x / √2)) / 2, which read x twice.
/// With `scalar_operands` the nodes' other operands must be rank-0 tensors of its dtype (a
/// kernel whose epilogue loads nothing else: kWindowEpilogue). Returns the region in graph
/// order, `mm` first and the exit last; empty when there is none. Nodes are taken in graph
/// order up to kMaxEpilogueNodes past `mm` (which may also be the view a kernel's output is
/// read through).
std::vector<NodeId> epilogue_region(const Graph& g, const Node& mm,
                                    const std::vector<std::vector<NodeId>>& readers,
                                    const std::vector<bool>& is_output, bool scalar_operands) {
  constexpr NodeId kMaxEpilogueNodes = 48;
  std::vector<NodeId> region{mm.id}, best;
  auto inside = [&region](NodeId id) {
    return std::find(region.begin(), region.end(), id) != region.end();
  };
  const NodeId last =
      std::min<NodeId>(static_cast<NodeId>(g.size()) - 1, mm.id + kMaxEpilogueNodes);
  for (NodeId id = mm.id + 1; id <= last; ++id) {
    const Node& c = g.node(id);
    if (!is_elementwise(c.op) || !(c.sym == mm.sym) || c.meta.dtype != mm.meta.dtype) continue;
    bool reads_region = false, reads_operand = false;
    for (NodeId in : c.inputs) {
      reads_region |= inside(in);
      if (mm.op == OpKind::MatMul) reads_operand |= in == mm.inputs[0] || in == mm.inputs[1];
      if (scalar_operands && !inside(in))
        reads_operand |= g.node(in).meta.rank() != 0 || g.node(in).meta.dtype != mm.meta.dtype;
    }
    if (!reads_region || reads_operand) continue;
    region.push_back(id);
    // The region closes at c when no other node of it is read outside it.
    bool closed = true;
    for (size_t i = 0; i + 1 < region.size() && closed; ++i) {
      closed = !is_output[region[i]];
      for (NodeId r : readers[static_cast<size_t>(region[i])]) closed = closed && inside(r);
    }
    if (closed) best = region;
  }
  return best;
}

/// Whether `region` (epilogue_region) may become an epilogue: not empty; none of its nodes is
/// part of an attention or a layer-norm pattern or of a region taken before; and none before
/// its exit is a graph output or stored by a rule other than several consumers reading it (an
/// earlier rule's decision stands).
bool region_is_free(const FusionDecision& d, const std::vector<NodeId>& region,
                    const std::vector<bool>& is_output, const std::vector<bool>& claimed) {
  if (region.empty()) return false;
  for (size_t i = 1; i < region.size(); ++i) {
    const NodeId id = region[i];
    if (claimed[id] || d.rule[id] == FusionRule::kAttention ||
        d.rule[id] == FusionRule::kLayerNorm || d.attention_of[id] >= 0 ||
        d.layer_norm_of[id] >= 0)
      return false;
    if (i + 1 < region.size() &&
        (is_output[id] || (d.materialize[id] && d.rule[id] != FusionRule::kMultiConsumer)))
      return false;
  }
  return true;
}

/// Makes `region` an epilogue: its inner nodes computed by the kernel, its exit stored
/// (kEpilogueRoot unless already stored by another rule), every node but the first claimed.
/// Returns the exit.
NodeId take_region(FusionDecision& d, const std::vector<NodeId>& region,
                   std::vector<bool>& claimed) {
  const NodeId exit = region.back();
  for (size_t i = 1; i < region.size(); ++i) claimed[region[i]] = true;
  for (size_t i = 1; i + 1 < region.size(); ++i) {
    d.materialize[region[i]] = false;
    d.rule[region[i]] = FusionRule::kInlinePointwise;
  }
  if (!d.materialize[exit]) d.rule[exit] = FusionRule::kEpilogueRoot;
  d.materialize[exit] = true;
  return exit;
}

}  // namespace

FusionDecision decide_fusion(const Graph& graph, bool fuse, bool attention, bool rowblock,
                             const MatmulRates& rates) {
  const size_t n = graph.size();
  FusionDecision d;
  d.materialize.assign(n, false);
  d.rule.assign(n, FusionRule::kInlinePointwise);
  std::vector<bool> is_output(n, false);
  for (NodeId o : graph.outputs()) is_output[o] = true;
  // Effective consumers: a view folds into each of its consumers, so a producer read through a
  // view is read once per consumer of that view.
  std::vector<int> uses(n, 0);
  for (NodeId o : graph.outputs()) ++uses[o];
  for (auto it = graph.nodes().rbegin(); it != graph.nodes().rend(); ++it) {
    int weight = (rule_inline_view(*it) && !is_output[it->id]) ? uses[it->id] : 1;
    for (NodeId in : it->inputs) uses[in] += weight;
  }

  for (const Node& node : graph.nodes()) {
    if (node.op == OpKind::Input || node.op == OpKind::Constant) {
      d.materialize[node.id] = true;  // already a buffer
      continue;
    }
    FusionRule rule;
    bool mat;
    if (is_output[node.id]) {
      rule = FusionRule::kGraphOutput, mat = true;
    } else if (rule_inline_literal(node)) {
      rule = FusionRule::kInlineLiteral, mat = false;
    } else if (rule_inline_view(node)) {
      rule = FusionRule::kInlineView, mat = false;
    } else if (rule_own_kernel(node)) {
      rule = FusionRule::kOwnKernel, mat = true;
    } else if (is_reduce(node.op)) {
      rule = FusionRule::kReduceBoundary, mat = true;
    } else if (!fuse) {
      rule = FusionRule::kUnfused, mat = true;
    } else if (rule_multi_consumer(node, uses[node.id])) {
      rule = FusionRule::kMultiConsumer, mat = true;
    } else {
      rule = FusionRule::kInlinePointwise, mat = false;
    }
    d.materialize[node.id] = mat;
    d.rule[node.id] = rule;
  }
  d.epilogue_of.assign(n, -1);
  d.attention_of.assign(n, -1);
  d.note.assign(n, {});
  d.layer_norm_of.assign(n, -1);
  d.layout_of.assign(n, -1);
  if (!fuse) {
    for (const Node& node : graph.nodes())
      if (node.op == OpKind::MatMul)
        d.note[node.id] = matmul_kernel_note(graph, d, node, rowblock, -1, rates);
    return d;
  }
  const std::vector<NodeId> first = first_consumers(graph);
  if (attention) {
    for (const Node& node : graph.nodes()) {
      if (node.op != OpKind::MatMul || !d.materialize[node.id]) continue;
      const std::optional<AttentionMatch> m = rule_attention(graph, d, node, uses, first);
      if (!m) continue;
      for (NodeId id : {m->scores, m->softmax, m->output}) {
        d.rule[id] = FusionRule::kAttention;
        d.materialize[id] = false;
      }
      const NodeId root = m->reshape >= 0 ? m->reshape : m->output;
      d.materialize[root] = true;
      d.rule[root] = FusionRule::kAttention;
      d.attention_of[root] = m->output;
    }
  }
  // LayerNorms spelled out as ops: one row-norm kernel each, writing the chain's root.
  for (const Node& node : graph.nodes()) {
    if (node.op != OpKind::Mean) continue;
    const std::optional<LayerNormMatch> m = rule_layer_norm(graph, d, node, uses, first);
    if (!m) continue;
    for (NodeId id : {m->mean, m->centred, m->square, m->var, m->shifted, m->denom, m->normed}) {
      if (id == m->root) continue;
      d.materialize[id] = false;
      d.rule[id] = FusionRule::kLayerNorm;
    }
    if (!d.materialize[m->root]) d.rule[m->root] = FusionRule::kLayerNorm;
    d.materialize[m->root] = true;
    d.layer_norm_of[m->root] = static_cast<int>(d.layer_norms.size());
    d.layer_norms.push_back(*m);
  }
  // Epilogue regions (epilogue_region). Nodes of a region already taken, or of the elementwise
  // chain an attention kernel applies to its scores (inline nodes between the scores and the
  // softmax), are never part of one.
  std::vector<bool> claimed(n, false);
  for (const Node& sm : graph.nodes()) {
    if (sm.op != OpKind::Softmax || d.rule[sm.id] != FusionRule::kAttention) continue;
    std::vector<NodeId> stack(sm.inputs.begin(), sm.inputs.end());
    while (!stack.empty()) {
      const Node& c = graph.node(stack.back());
      stack.pop_back();
      if (claimed[c.id] || d.materialize[c.id] || !is_elementwise(c.op)) continue;
      claimed[c.id] = true;
      stack.insert(stack.end(), c.inputs.begin(), c.inputs.end());
    }
  }
  std::vector<std::vector<NodeId>> reader_lists(n);  // per node, the nodes reading it directly
  for (const Node& c : graph.nodes())
    for (NodeId in : c.inputs) reader_lists[static_cast<size_t>(in)].push_back(c.id);
  // A matmul's region is stored by the matmul kernel at its one exit (kEpilogueRoot); the nodes
  // inside it are computed there, not stored.
  for (const Node& mm : graph.nodes()) {
    // (The product read once: rule_matmul_epilogue takes it only then.)
    if (mm.op != OpKind::MatMul || d.rule[mm.id] != FusionRule::kOwnKernel || uses[mm.id] != 1)
      continue;
    const std::vector<NodeId> region = epilogue_region(graph, mm, reader_lists, is_output, false);
    if (region_is_free(d, region, is_output, claimed)) take_region(d, region, claimed);
  }
  // A depthwise_nhwc read only through the reshape to its product matrix: the elementwise
  // region after that reshape (an activation on scalar operands) is applied by its kernel
  // before the store (kWindowEpilogue), as a matmul's epilogue is.
  for (const Node& dw : graph.nodes()) {
    if (dw.op != OpKind::DepthwiseNhwc || d.rule[dw.id] != FusionRule::kOwnKernel ||
        reader_lists[dw.id].size() != 1)
      continue;
    const Node& r = graph.node(reader_lists[dw.id][0]);
    if (r.op != OpKind::Reshape || is_output[r.id] || r.sym.size() != 2 ||
        !(r.sym[1] == dw.sym[3]))
      continue;
    const std::vector<NodeId> region = epilogue_region(graph, r, reader_lists, is_output, true);
    if (!region_is_free(d, region, is_output, claimed)) continue;
    const NodeId exit = take_region(d, region, claimed);
    d.materialize[dw.id] = false;
    d.rule[dw.id] = FusionRule::kWindowEpilogue;
    d.epilogue_of[exit] = dw.id;
  }
  // A matmul whose operands the row-block kernel cannot read in place gets them stored, when
  // cheaper.
  for (const Node& mm : graph.nodes()) {
    if (mm.op != OpKind::MatMul || d.rule[mm.id] == FusionRule::kAttention) continue;
    std::string note;
    const OperandStores stores = rule_matmul_operand(graph, d, mm, rowblock, rates, &note);
    for (int i = 0; i < 2; ++i) {
      if (!(i == 0 ? stores.a : stores.b)) continue;
      const NodeId op = mm.inputs[static_cast<size_t>(i)];
      d.materialize[op] = true;
      d.rule[op] = FusionRule::kMatmulOperand;
      d.note[op] = note;
    }
  }
  for (const Node& node : graph.nodes()) {
    if (!d.materialize[node.id] || node.op == OpKind::Input || node.op == OpKind::Constant ||
        d.attention_of[node.id] >= 0 || d.layer_norm_of[node.id] >= 0)
      continue;
    const NodeId mm = rule_matmul_epilogue(graph, d, node, uses);
    if (mm < 0) continue;
    d.materialize[mm] = false;
    d.rule[mm] = FusionRule::kMatmulEpilogue;
    d.epilogue_of[node.id] = mm;
  }
  // Conv products stored as the NCHW tensor their view reads (kMatmulLayout).
  const std::vector<int> readers = direct_readers(graph);
  for (const Node& p : graph.nodes()) {
    const NodeId x = rule_matmul_layout(graph, d, p, is_output, readers, rowblock, rates);
    if (x < 0) continue;
    d.materialize[x] = false;
    d.rule[x] = d.epilogue_of[x] >= 0 ? FusionRule::kInlinePointwise : FusionRule::kMatmulEpilogue;
    d.materialize[p.id] = true;
    d.rule[p.id] = FusionRule::kMatmulLayout;
    d.layout_of[p.id] = x;  // (epilogue_of[x] still names the product x ends)
  }
  for (const Node& node : graph.nodes()) {
    if (d.layout_of[node.id] >= 0) {
      const NodeId x = d.layout_of[node.id];
      const NodeId mm = layout_matmul(d, x);
      d.note[mm] =
          matmul_kernel_note(graph, d, graph.node(mm), rowblock, mm == x ? NodeId{-1} : x, rates) +
          "; stores %" + std::to_string(node.id) + " (NCHW)";
    } else if (d.epilogue_of[node.id] >= 0 &&
               graph.node(d.epilogue_of[node.id]).op == OpKind::MatMul) {
      const Node& mm = graph.node(d.epilogue_of[node.id]);
      d.note[mm.id] = matmul_kernel_note(graph, d, mm, rowblock, node.id, rates);
    } else if (node.op == OpKind::MatMul && d.materialize[node.id] &&
               d.rule[node.id] != FusionRule::kAttention) {
      d.note[node.id] = matmul_kernel_note(graph, d, node, rowblock, -1, rates);
    }
  }
  return d;
}

std::string fusion_decision_to_string(const Graph& graph, const FusionDecision& d) {
  std::string s;
  for (const Node& node : graph.nodes()) {
    if (node.op == OpKind::Input || node.op == OpKind::Constant) continue;
    s += "%" + std::to_string(node.id) + " " + op_name(node.op) + ": " +
         fusion_rule_name(d.rule[node.id]) + (d.materialize[node.id] ? " (stored)" : "") +
         (node.id < static_cast<NodeId>(d.note.size()) && !d.note[node.id].empty()
              ? " [" + d.note[node.id] + "]"
              : std::string()) +
         "\n";
  }
  return s;
}

}  // namespace kiln
