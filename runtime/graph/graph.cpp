#include "graph/graph.h"

#include "core/size_check.h"

#include <algorithm>

namespace kiln {

SymShape sym_shape_of(std::span<const Dim> shape) {
  return SymShape(shape.begin(), shape.end());
}

Shape evaluate_shape(std::span<const SymInt> shape, std::span<const int64_t> values) {
  Shape out;
  out.reserve(shape.size());
  for (const SymInt& d : shape) out.push_back(d.evaluate(values));
  return out;
}

std::string sym_shape_str(std::span<const SymInt> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

namespace {
bool shape_is_symbolic(const SymShape& s) {
  for (const SymInt& d : s)
    if (!d.is_constant()) return true;
  return false;
}
}  // namespace

NodeId Graph::add_input(const TensorMeta& meta, const std::string& loc, SymShape sym) {
  Node n;
  n.id = static_cast<NodeId>(nodes_.size());
  n.op = OpKind::Input;
  n.meta = meta;
  n.sym = sym.empty() && !meta.shape.empty() ? sym_shape_of(meta.shape) : std::move(sym);
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
  n.sym = sym_shape_of(meta.shape);
  n.attrs.index = index;
  n.loc = loc;
  nodes_.push_back(std::move(n));
  constants_.push_back(nodes_.back().id);
  return nodes_.back().id;
}

NodeId Graph::add_copy(const Node& n, std::vector<NodeId> inputs) {
  Node c = n;
  c.id = static_cast<NodeId>(nodes_.size());
  c.inputs = std::move(inputs);
  nodes_.push_back(std::move(c));
  if (n.op == OpKind::Input) inputs_.push_back(nodes_.back().id);
  if (n.op == OpKind::Constant) constants_.push_back(nodes_.back().id);
  return nodes_.back().id;
}

Expected<NodeId> Graph::add(OpKind op, std::vector<NodeId> inputs, Attrs attrs,
                            const std::string& loc, SymShape target) {
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
  if (std::string why = tensor_size_error(meta->shape, meta->dtype); !why.empty())
    return invalid_argument(std::string(op_name(op)) + (loc.empty() ? "" : " at " + loc) +
                            ": its result's " + why);
  std::vector<SymShape> syms;
  for (NodeId in : inputs) syms.push_back(nodes_[in].sym);
  auto sym = infer_sym_shape(op, syms, attrs, *meta, target, env_,
                             std::string(op_name(op)) + (loc.empty() ? "" : " at " + loc), metas);
  if (!sym.ok()) return loc.empty() ? sym.status() : sym.status().with_context("at " + loc);
  Node n;
  n.id = static_cast<NodeId>(nodes_.size());
  n.op = op;
  n.inputs = std::move(inputs);
  n.meta = std::move(meta).value();
  n.sym = std::move(sym).value();
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
    const bool symbolic = shape_is_symbolic(n.sym);
    std::string a = n.attrs.str(n.op);
    if (symbolic && (n.op == OpKind::Reshape || n.op == OpKind::Expand || n.op == OpKind::Full))
      a = "shape=" + sym_shape_str(n.sym) + (n.op == OpKind::Full ? ", " + a : "");
    else if (symbolic && n.op == OpKind::Arange)
      a = "length=" + n.sym[0].str() + ", " + a;
    if (!a.empty()) s += (n.inputs.empty() ? "" : ", ") + a;
    s += ") : " +
         (symbolic ? std::string(dtype_name(n.meta.dtype)) + sym_shape_str(n.sym) : n.meta.str());
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
  for (const Node& n : nodes_) {
    bool ok = n.sym.size() == n.meta.shape.size();
    for (size_t d = 0; ok && d < n.sym.size(); ++d)
      ok = !n.sym[d].is_constant() || n.sym[d].constant_value() == n.meta.shape[d];
    if (!ok)
      return internal_error("node %" + std::to_string(n.id) + ": symbolic shape " +
                            sym_shape_str(n.sym) + " does not fit " + n.meta.str());
  }
  for (NodeId out : outputs_)
    if (out < 0 || static_cast<size_t>(out) >= nodes_.size())
      return internal_error("bad output id");
  return {};
}

bool Graph::is_symbolic() const {
  for (const Node& n : nodes_)
    if (shape_is_symbolic(n.sym)) return true;
  return false;
}

void Graph::canonicalize(const ShapeEnv& env) {
  hints_.assign(static_cast<size_t>(env.num_symbols()), 0);
  for (int s = 0; s < env.num_symbols(); ++s) hints_[static_cast<size_t>(s)] = env.info(s).hint;
  unbacked_.clear();
  for (Node& n : nodes_) {
    for (SymInt& d : n.sym) {
      d = env.simplify(d);
      for (int s : d.free_symbols())
        if (env.info(s).unbacked) unbacked_.push_back(s);
    }
  }
  std::sort(unbacked_.begin(), unbacked_.end());
  unbacked_.erase(std::unique(unbacked_.begin(), unbacked_.end()), unbacked_.end());
}

Expected<Graph> Graph::instantiate(std::span<const int64_t> values) const {
  Graph g;
  for (const Node& n : nodes_) {
    Shape shape = evaluate_shape(n.sym, values);
    for (Dim d : shape)
      if (d < 0)
        return invalid_argument("node %" + std::to_string(n.id) + " (" + op_name(n.op) +
                                "): negative size in " + shape_str(shape));
    if (n.op == OpKind::Input || n.op == OpKind::Constant) {
      Node c = n;
      c.meta.shape = shape;
      c.sym = sym_shape_of(shape);
      g.nodes_.push_back(std::move(c));
      (n.op == OpKind::Input ? g.inputs_ : g.constants_).push_back(n.id);
      continue;
    }
    Attrs a = n.attrs;
    if (n.op == OpKind::Reshape || n.op == OpKind::Expand || n.op == OpKind::Full) a.dims = shape;
    if (n.op == OpKind::Resize)  // a symbolic size at `values` (-1 still keeps the axis)
      for (size_t i = 0; i < a.dims.size() && i < shape.size(); ++i)
        if (a.dims[i] >= 0) a.dims[i] = shape[i];
    if (op_category(n.op) == OpCategory::kCompaction) {  // the length at `values`: a constant
      a.dims = {shape[0]};
      a.index = -1;
    }
    if (n.op == OpKind::Arange && a.range.size() == 3 && !n.sym[0].is_constant())
      a.range[1] = a.range[0] + static_cast<double>(shape[0]) * a.range[2];
    KILN_ASSIGN_OR_RETURN(NodeId id, g.add(n.op, n.inputs, std::move(a), n.loc));
    if (g.nodes_[id].meta.shape != shape)
      return internal_error("instantiating node %" + std::to_string(n.id) + " (" + op_name(n.op) +
                            "): the rule gives " + g.nodes_[id].meta.str() + ", symbolic shape " +
                            sym_shape_str(n.sym) + " gives " + shape_str(shape));
  }
  g.outputs_ = outputs_;
  return g;
}

}  // namespace kiln
