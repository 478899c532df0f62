/// \file interpreter_chain.h
/// Private to runtime/eager: chains of f32 elementwise nodes (an activation written out as
/// add, maximum, minimum, mul and div; tanh-GELU's nine ops) evaluated in one pass over
/// cache-sized blocks of the output instead of one pass over memory per node. A chain is a set
/// of nodes near each other in graph order, each unary or binary arithmetic on f32 tensors with the
/// same output shape, every value but the last read only by later nodes of the run. Each block
/// of the last node's output is computed node by node through block buffers that stay in
/// cache; the intermediates are never materialised. Every element is the same function of the
/// same values as node by node, so the results are the same bits.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "eager/host_tensor.h"
#include "eager/interpreter_ops.h"
#include "graph/graph.h"
#include "kiln/status.h"

namespace kiln::eager {

/// The chains of `graph`: each a list of node positions in graph order (at least 2). Members
/// need not be adjacent: nodes between them that read no member (the constants a chain's
/// binary ops read, other branches) run as usual, and the chain runs at its last member.
std::vector<std::vector<size_t>> find_chains(const Graph& graph);

/// Evaluates a chain into `out` (its last node's value, allocated by the caller). `value[id]`
/// is node id's tensor for every input from outside the chain.
Status eval_chain(const Graph& graph, std::span<const size_t> chain,
                  std::span<const HostTensor* const> value, HostTensor& out);

/// A chain applied in place to the output of the node that alone feeds it, while that node
/// writes it (the interpreter's fusion of a Conv with the activation after it, e.g. HardSwish's
/// five ops): every member reads that source node (same shape), one-element tensors or earlier
/// members, so each element of the chain's value is a function of the same element of the
/// source alone, computed in the same order as eval_chain: the same bits.
class PointwiseChain {
 public:
  /// The chain as a function of node `source`, or nullopt when a member reads another tensor of
  /// more than one element or a value not live in `value` yet (the one-element operands are
  /// read through `value` when the chain is applied).
  static std::optional<PointwiseChain> make(const Graph& graph, std::span<const size_t> chain,
                                            NodeId source,
                                            std::span<const HostTensor* const> value);
  PointwiseChain(PointwiseChain&& other) noexcept;

  /// y[0, n) = chain(y[0, n)), in place; any thread. A failure is kept for status().
  void apply(float* y, int64_t n) const;
  /// The first failure of apply(), if any.
  Status status() const;

 private:
  PointwiseChain() = default;
  struct Input {
    int member = -1;          // the earlier member read, or -1
    const float* scalar = nullptr;  // a one-element operand, or (member < 0) the source
  };
  const Graph* graph_ = nullptr;
  std::vector<size_t> chain_;
  std::vector<std::vector<Input>> inputs_;
  std::vector<BlockPlan> plans_;
  mutable std::mutex mu_;
  mutable Status failed_;
};

}  // namespace kiln::eager
