#include "graph/graph.h"

namespace kiln {

NodeId Graph::add_input(const TensorMeta& meta, const std::string& loc) {
  Node n;
  n.id = static_cast<NodeId>(nodes_.size());
  n.op = OpKind::Input;
  n.meta = meta;
  n.attrs.index = static_cast<int64_t>(inputs_.size());
  n.loc = loc;
  nodes_.push_back(std::move(n));
  inputs_.push_back(nodes_.back().id);
  return nodes_.back().id;
}

NodeId Graph::add_constant(const TensorMeta& meta, int64_t index, const std::string& loc) {
  Node n;
  n.id = static_cast<NodeId>(nodes_.size());
  n.op = OpKind::Constant;
  n.meta = meta;
  n.attrs.index = index;
  n.loc = loc;
  nodes_.push_back(std::move(n));
  constants_.push_back(nodes_.back().id);
  return nodes_.back().id;
}

Expected<NodeId> Graph::add(OpKind op, std::vector<NodeId> inputs, Attrs attrs,
                            const std::string& loc) {
  if (op == OpKind::Input || op == OpKind::Constant)
    return invalid_argument("use add_input / add_constant for source nodes");
  std::vector<TensorMeta> metas;
  for (NodeId in : inputs) {
    if (in < 0 || static_cast<size_t>(in) >= nodes_.size())
      return invalid_argument(std::string(op_name(op)) + ": unknown input node %" +
                              std::to_string(in));
    metas.push_back(nodes_[in].meta);
  }
  if (is_reduce(op)) {
    if (metas.size() != 1) return invalid_argument(std::string(op_name(op)) + ": expects 1 input");
    KILN_ASSIGN_OR_RETURN(attrs.dims, normalize_axes(attrs.dims, metas[0].rank()));
  }
  auto meta = infer_meta(op, metas, attrs);
  if (!meta.ok()) return loc.empty() ? meta.status() : meta.status().with_context("at " + loc);
  Node n;
  n.id = static_cast<NodeId>(nodes_.size());
  n.op = op;
  n.inputs = std::move(inputs);
  n.meta = std::move(meta).value();
  n.attrs = std::move(attrs);
  n.loc = loc;
  nodes_.push_back(std::move(n));
  return nodes_.back().id;
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> uses(nodes_.size(), 0);
  for (const Node& n : nodes_)
    for (NodeId in : n.inputs) ++uses[in];
  for (NodeId out : outputs_) ++uses[out];
  return uses;
}

size_t Graph::op_count() const {
  size_t n = 0;
  for (const Node& node : nodes_) n += (node.op != OpKind::Input && node.op != OpKind::Constant);
  return n;
}

std::string Graph::to_string() const {
  std::string s;
  for (const Node& n : nodes_) {
    s += "%" + std::to_string(n.id) + " = " + op_name(n.op) + "(";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      s += (i ? ", %" : "%") + std::to_string(n.inputs[i]);
    std::string a = n.attrs.str(n.op);
    if (!a.empty()) s += (n.inputs.empty() ? "" : ", ") + a;
    s += ") : " + n.meta.str();
    if (!n.loc.empty()) s += "  # " + n.loc;
    s += "\n";
  }
  s += "return (";
  for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", %" : "%") + std::to_string(outputs_[i]);
  return s + ")\n";
}

Status Graph::verify() const {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    std::string where = "node %" + std::to_string(i) + " (" + op_name(n.op) + ")";
    if (n.id != static_cast<NodeId>(i)) return internal_error(where + ": id mismatch");
    for (NodeId in : n.inputs)
      if (in < 0 || in >= n.id)
        return internal_error(where + ": input %" + std::to_string(in) + " is not earlier");
    if (n.op == OpKind::Input || n.op == OpKind::Constant) {
      if (!n.inputs.empty()) return internal_error(where + ": source node with inputs");
      continue;
    }
    std::vector<TensorMeta> metas;
    for (NodeId in : n.inputs) metas.push_back(nodes_[in].meta);
    auto meta = infer_meta(n.op, metas, n.attrs);
    if (!meta.ok()) return internal_error(where + ": " + meta.status().message());
    if (!(*meta == n.meta))
      return internal_error(where + ": meta " + n.meta.str() + " but rule gives " + meta->str());
  }
  for (NodeId out : outputs_)
    if (out < 0 || static_cast<size_t>(out) >= nodes_.size())
      return internal_error("bad output id");
  return {};
}

}  // namespace kiln
