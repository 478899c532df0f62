// The kLayerNorm rule: a LayerNorm spelled out as ops, as exporters of ONNX opsets before 17
// write it (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, then Mul and Add), matched on the
// graph's structure and computed by one row-norm kernel (codegen/lower_norm.cpp) instead of four.
#include <algorithm>

#include "codegen/fusion.h"

namespace kiln {
namespace {

bool f32(const Node& n) {
  return n.meta.dtype == DType::kF32;
}

/// One element, whatever its rank: broadcasts as a scalar.
bool single_element(const Node& n) {
  return std::all_of(n.sym.begin(), n.sym.end(),
                     [](const SymInt& s) { return s.is_constant() && s.constant_value() == 1; });
}

/// A keepdim mean over the trailing dims of its input; the number of dims, or 0.
int64_t trailing_mean(const Graph& g, const Node& n) {
  if (n.op != OpKind::Mean || !n.attrs.keepdim || n.attrs.dims.empty() || !f32(n)) return 0;
  const int64_t rank = static_cast<int64_t>(g.node(n.inputs[0]).sym.size());
  const int64_t k = static_cast<int64_t>(n.attrs.dims.size());
  for (int64_t i = 0; i < k; ++i)
    if (n.attrs.dims[static_cast<size_t>(i)] != rank - k + i) return 0;
  return k;
}

NodeId sole(NodeId id, const std::vector<int>& uses, const std::vector<NodeId>& first) {
  return uses[id] == 1 ? first[id] : -1;
}

/// The input of binary `n` that is not `operand` (-1 if neither or both are).
NodeId other_input(const Node& n, NodeId operand) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == operand && n.inputs[1] != operand) return n.inputs[1];
  if (n.inputs[1] == operand && n.inputs[0] != operand) return n.inputs[0];
  return -1;
}

}  // namespace

std::optional<LayerNormMatch> rule_layer_norm(const Graph& g, const FusionDecision& d,
                                              const Node& var, const std::vector<int>& uses,
                                              const std::vector<NodeId>& first) {
  LayerNormMatch m;
  m.var = var.id;
  m.dims = trailing_mean(g, var);
  if (m.dims == 0 || uses[var.id] != 1) return std::nullopt;
  const Node& sq = g.node(var.inputs[0]);
  if (uses[sq.id] != 1 || !f32(sq)) return std::nullopt;
  m.square = sq.id;
  if (sq.op == OpKind::Pow && single_element(g.node(sq.inputs[1]))) {
    m.centred = sq.inputs[0];
  } else if (sq.op == OpKind::Mul && sq.inputs[0] == sq.inputs[1]) {
    m.centred = sq.inputs[0];
  } else {
    return std::nullopt;
  }
  const Node& c = g.node(m.centred);
  // The centred value's uses: the square (twice for c·c) and the normalisation.
  const int centred_uses = sq.op == OpKind::Mul ? 3 : 2;
  if (c.op != OpKind::Sub || uses[c.id] != centred_uses || !f32(c)) return std::nullopt;
  m.x = c.inputs[0];
  m.mean = c.inputs[1];
  const Node& mean = g.node(m.mean);
  if (trailing_mean(g, mean) != m.dims || mean.inputs[0] != m.x || uses[mean.id] != 1 ||
      mean.attrs.dims != var.attrs.dims || !(g.node(m.x).sym == c.sym) || !f32(g.node(m.x)))
    return std::nullopt;
  // var + eps, sqrt or rsqrt, then the division or product.
  m.shifted = sole(var.id, uses, first);
  if (m.shifted < 0) return std::nullopt;
  const Node& sh = g.node(m.shifted);
  const NodeId eps = other_input(sh, var.id);
  if (sh.op != OpKind::Add || eps < 0 || !single_element(g.node(eps)) || !f32(sh))
    return std::nullopt;
  m.denom = sole(sh.id, uses, first);
  if (m.denom < 0) return std::nullopt;
  const Node& den = g.node(m.denom);
  if (den.op != OpKind::Sqrt && den.op != OpKind::Rsqrt) return std::nullopt;
  m.normed = sole(den.id, uses, first);
  if (m.normed < 0) return std::nullopt;
  const Node& nd = g.node(m.normed);
  const bool divides = den.op == OpKind::Sqrt && nd.op == OpKind::Div && nd.inputs[0] == c.id &&
                       nd.inputs[1] == den.id;
  const bool multiplies =
      den.op == OpKind::Rsqrt && nd.op == OpKind::Mul && other_input(nd, den.id) == c.id;
  if ((!divides && !multiplies) || !(nd.sym == c.sym) || !f32(nd)) return std::nullopt;
  for (NodeId id : {m.mean, m.centred, m.square, m.var, m.shifted, m.denom})
    if (d.rule[id] == FusionRule::kGraphOutput) return std::nullopt;
  // The root: the first stored node of normed's single-use elementwise chain, or its end.
  NodeId cur = m.normed;
  while (!d.materialize[cur]) {
    const NodeId next = sole(cur, uses, first);
    if (next < 0) break;
    const Node& nn = g.node(next);
    if (!is_elementwise(nn.op) || !(nn.sym == nd.sym) || !f32(nn)) break;
    cur = next;
  }
  m.root = cur;
  return m;
}

}  // namespace kiln
