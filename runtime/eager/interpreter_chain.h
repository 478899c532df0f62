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
#include <span>
#include <vector>

#include "eager/host_tensor.h"
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

}  // namespace kiln::eager
