/// \file graph.h
/// Graph IR: a list of single-output nodes in topological order.
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
#include "kiln/dtype.h"
#include "kiln/status.h"

namespace kiln {

using NodeId = int32_t;

struct Node {
  NodeId id = -1;
  OpKind op = OpKind::Input;
  std::vector<NodeId> inputs;
  TensorMeta meta;
  Attrs attrs;
  std::string loc;  // "file.cpp:42", where the op was recorded ("" if unknown)
};

class Graph {
 public:
  /// Graph input number `index` (the index-th tensor argument of the traced function).
  NodeId add_input(const TensorMeta& meta, const std::string& loc = "");
  /// A captured tensor (weight); `index` names it in the caller's constant list.
  NodeId add_constant(const TensorMeta& meta, int64_t index, const std::string& loc = "");
  /// Any other op; runs its shape rule.
  Expected<NodeId> add(OpKind op, std::vector<NodeId> inputs, Attrs attrs = {},
                       const std::string& loc = "");

  void set_outputs(std::vector<NodeId> outputs) { outputs_ = std::move(outputs); }

  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<NodeId>& inputs() const { return inputs_; }
  const std::vector<NodeId>& constants() const { return constants_; }
  const std::vector<NodeId>& outputs() const { return outputs_; }
  size_t size() const { return nodes_.size(); }

  /// Number of consumers of each node (graph outputs count as one use each).
  std::vector<int> use_counts() const;
  /// Readable listing, one node a line: "%3 = add(%1, %2) : f32[4, 8]  # model.cpp:12".
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
};

}  // namespace kiln
