/// \file interpreter.h
/// The CPU eager interpreter: runs any Graph on host tensors. It implements every op and is the
/// oracle every Vulkan kernel is tested against. Stateless and thread-safe.
#pragma once

#include <span>
#include <vector>

#include "eager/host_tensor.h"
#include "graph/graph.h"
#include "kiln/status.h"

namespace kiln {

/// Runs `graph`. inputs[i] feeds the Input node with attrs.index == i, constants[j] the Constant
/// node with attrs.index == j. Metas must match the nodes exactly. Returns one tensor per graph
/// output, in order.
Expected<std::vector<HostTensor>> interpret(const Graph& graph,
                                            std::span<const HostTensor* const> inputs,
                                            std::span<const HostTensor* const> constants);

/// Evaluates a single op on host tensors (builds a one-node graph): the eager CPU path.
Expected<HostTensor> interpret_op(OpKind op, std::span<const HostTensor* const> inputs,
                                  const Attrs& attrs);

}  // namespace kiln
