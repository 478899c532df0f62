/// \file graph.h
/// Graph IR: a list of single-output nodes in topological order.
///
/// Every node has a concrete meta (dtype and the sizes seen when it was recorded: the hints)
/// and a symbolic shape `sym` over the size symbols of a ShapeEnv. Static graphs have constant
/// symbolic shapes. A graph with symbols serves every size of its shape class: instantiate()
/// gives the concrete graph for one binding of the symbols.
///
/// Nodes are created only through Graph::add*, which runs the op's shape rule, so every graph
/// built this way is well typed; verify() re-checks the invariants (used between passes and
/// after deserialisation). Not thread-safe; a Graph is owned by one compile at a time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/op.h"
#include "graph/symbolic.h"
#include "kiln/dtype.h"
#include "kiln/status.h"

namespace kiln {

using NodeId = int32_t;
using SymShape = std::vector<SymInt>;

SymShape sym_shape_of(std::span<const Dim> shape);  ///< Constant symbolic shape.
/// Evaluates a symbolic shape at `values` (one per symbol id).
Shape evaluate_shape(std::span<const SymInt> shape, std::span<const int64_t> values);
std::string sym_shape_str(std::span<const SymInt> shape);  ///< "[s0, 64]"

struct Node {
  NodeId id = -1;
  OpKind op = OpKind::Input;
  std::vector<NodeId> inputs;
  TensorMeta meta;  // dtype and the concrete sizes seen when recorded (the hints)
  SymShape sym;     // the symbolic shape (constants for static dims); same rank as meta
  Attrs attrs;
  std::string loc;  // "file.cpp:42", where the op was recorded ("" if unknown)
};

class Graph {
 public:
  /// Graph input number `index`; `sym` is its symbolic shape (empty: static, from `meta`).
  NodeId add_input(const TensorMeta& meta, const std::string& loc = "", SymShape sym = {});
  /// A captured tensor (weight); `index` names it in the caller's constant list.
  NodeId add_constant(const TensorMeta& meta, int64_t index, const std::string& loc = "");
  /// Any other op; runs its shape rule on the concrete metas and on the symbolic shapes.
  /// `target`: the symbolic output shape of Reshape, Expand and Full and the symbolic length of
  /// Arange (empty: constants from the attributes). Decisions the symbolic rule takes (two
  /// sizes broadcast equal, a reshape keeps the element count) are recorded as guards in the
  /// shape environment (see set_shape_env); without one they must be structurally evident.
  Expected<NodeId> add(OpKind op, std::vector<NodeId> inputs, Attrs attrs = {},
                       const std::string& loc = "", SymShape target = {});

  /// `n` appended as it is (op, attrs, metas, symbolic shape; no shape rule runs) with
  /// `inputs` as its inputs: for a pass that rebuilds a graph around some of its nodes. An
  /// Input or Constant keeps its index and joins inputs() or constants().
  NodeId add_copy(const Node& n, std::vector<NodeId> inputs);
  /// The symbol hints and unbacked symbols of `other` (a graph this one was rebuilt from).
  void copy_symbols_of(const Graph& other) {
    hints_ = other.hints_;
    unbacked_ = other.unbacked_;
  }
  /// The ShapeEnv that symbolic decisions record their guards in (not owned; may be null).
  void set_shape_env(ShapeEnv* env) { env_ = env; }
  /// The value each symbol had when the graph was recorded (indexed by symbol id); codegen
  /// takes size-dependent heuristics from these. Empty for static graphs. Not encoded in the
  /// graph's GraphKey (graph/graph_key.h) themselves: the node metas, which are, hold the sizes
  /// at the hints.
  const std::vector<int64_t>& symbol_hints() const { return hints_; }
  void set_symbol_hints(std::vector<int64_t> hints) { hints_ = std::move(hints); }
  /// The unbacked symbols (ShapeEnv::create_unbacked_symbol) some node's shape mentions, sorted:
  /// a MaskedSelect defines each one, or an input dim carries it in from an earlier graph.
  /// Set by canonicalize(); part of the GraphKey.
  const std::vector<int>& unbacked_symbols() const { return unbacked_; }
  /// True when some node's shape mentions a symbol.
  bool is_symbolic() const;
  /// Rewrites every symbolic shape in the canonical form of `env` (after the trace learned
  /// equalities) and records the hints.
  void canonicalize(const ShapeEnv& env);
  /// The concrete graph for symbol values `values`: every meta (and the size attributes of
  /// Reshape, Expand, Full and Arange) evaluated. The result has constant symbolic shapes.
  Expected<Graph> instantiate(std::span<const int64_t> values) const;

  void set_outputs(std::vector<NodeId> outputs) { outputs_ = std::move(outputs); }

  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<NodeId>& inputs() const { return inputs_; }
  const std::vector<NodeId>& constants() const { return constants_; }
  const std::vector<NodeId>& outputs() const { return outputs_; }
  size_t size() const { return nodes_.size(); }

  /// Number of consumers of each node (graph outputs count as one use each).
  std::vector<int> use_counts() const;
  /// Readable listing, one node a line: "%3 = add(%1, %2) : f32[4, 8]  # model.cpp:12". For
  /// people only: it rounds constants and omits attributes; caches key on GraphKey.
  std::string to_string() const;
  /// Checks topological order, arities, ids, and that each node's meta matches its rule.
  Status verify() const;
  /// Count of nodes that are not inputs/constants.
  size_t op_count() const;

 private:
  std::vector<Node> nodes_;
  std::vector<NodeId> inputs_;
  std::vector<NodeId> constants_;
  std::vector<NodeId> outputs_;
  std::vector<int64_t> hints_;
  std::vector<int> unbacked_;
  ShapeEnv* env_ = nullptr;
};

/// The symbolic shape rule of `op` (graph/sym_rules.cpp): the output's symbolic shape from the
/// inputs' symbolic shapes. `out` is the op's concrete output meta (already checked by
/// infer_meta); `target` as in Graph::add. Guards go to `env` (may be null). `metas` are the
/// inputs' metas (needed by the rules that ops.def rows name, graph/shape_rule.h).
Expected<SymShape> infer_sym_shape(OpKind op, std::span<const SymShape> ins, const Attrs& attrs,
                                   const TensorMeta& out, const SymShape& target, ShapeEnv* env,
                                   const std::string& provenance,
                                   std::span<const TensorMeta> metas = {});
/// Symbolic Python slice on a dim of symbolic `size` (start/end/step as in Attrs::dims).
struct SymSliceRange {
  SymInt start, length;
};
SymSliceRange resolve_sym_slice(int64_t start, int64_t end, int64_t step, const SymInt& size,
                                const SymFacts* facts);

}  // namespace kiln
