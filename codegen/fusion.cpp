#include "codegen/fusion.h"

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
  switch (op_category(n.op)) {
    case OpCategory::kContraction:
    case OpCategory::kNormalization:
    case OpCategory::kWindow:
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
  // Depth-first through the root's inline elementwise producers of the root's shape.
  std::vector<NodeId> stack(root.inputs.begin(), root.inputs.end());
  while (!stack.empty()) {
    const Node& n = graph.node(stack.back());
    stack.pop_back();
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

FusionDecision decide_fusion(const Graph& graph, bool fuse) {
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
  if (!fuse) return d;
  for (const Node& node : graph.nodes()) {
    if (!d.materialize[node.id] || node.op == OpKind::Input || node.op == OpKind::Constant)
      continue;
    const NodeId mm = rule_matmul_epilogue(graph, d, node, uses);
    if (mm < 0) continue;
    d.materialize[mm] = false;
    d.rule[mm] = FusionRule::kMatmulEpilogue;
    d.epilogue_of[node.id] = mm;
  }
  return d;
}

std::string fusion_decision_to_string(const Graph& graph, const FusionDecision& d) {
  std::string s;
  for (const Node& node : graph.nodes()) {
    if (node.op == OpKind::Input || node.op == OpKind::Constant) continue;
    s += "%" + std::to_string(node.id) + " " + op_name(node.op) + ": " +
         fusion_rule_name(d.rule[node.id]) + (d.materialize[node.id] ? " (stored)" : "") + "\n";
  }
  return s;
}

}  // namespace kiln
