// Graph evaluation for the CPU interpreter: binds inputs and constants, runs the nodes in
// topological order (kernels in interpreter_ops.cpp) and frees each intermediate after its last
// use. Input and Constant nodes alias the caller's tensors; nothing is copied until the outputs.
// A Reshape that is the last reader of an intermediate takes over its bytes.
#include "eager/interpreter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "eager/interpreter_chain.h"
#include "eager/interpreter_ops.h"
#include "kiln/logging.h"

namespace kiln {
namespace {

/// Checks that `t` may feed `node` (an Input or Constant node): index in range, exact meta.
Status bind_source(const Node& node, std::span<const HostTensor* const> given, const char* what,
                   const HostTensor** bound) {
  const int64_t index = node.attrs.index;
  const std::string name = std::string(what) + " " + std::to_string(index);
  if (index < 0 || index >= static_cast<int64_t>(given.size()))
    return invalid_argument(name + " (node %" + std::to_string(node.id) + ") is out of range: " +
                            std::to_string(given.size()) + " " + what + "s given");
  const HostTensor* t = given[static_cast<size_t>(index)];
  if (t == nullptr) return invalid_argument(name + " is null");
  if (!(t->meta == node.meta))
    return invalid_argument(name + ": expected " + node.meta.str() + ", got " + t->meta.str());
  if (t->data.size() != t->meta.nbytes())
    return invalid_argument(name + " (" + t->meta.str() + ") holds " +
                            std::to_string(t->data.size()) + " bytes, expected " +
                            std::to_string(t->meta.nbytes()));
  *bound = t;
  return {};
}

/// True when `node` is a Reshape whose input is an intermediate computed here (not the caller's
/// tensor) that no later node or output reads, so its bytes may move into the result instead of
/// being copied.
bool reshape_in_place(const Node& node, const std::vector<int>& uses,
                      const std::vector<const HostTensor*>& value,
                      const std::vector<HostTensor>& owned) {
  if (node.op != OpKind::Reshape || node.inputs.size() != 1) return false;
  const auto in = static_cast<size_t>(node.inputs[0]);
  return uses[in] == 1 && value[in] == &owned[in] && owned[in].data.size() == node.meta.nbytes();
}

/// For each node position, whether it is an f32 Conv whose only reader is a Relu of the same meta
/// that no fused chain holds: the Conv then runs with the Relu (eval_conv_relu) and the Relu
/// takes over its bytes, one pass over the outputs instead of two.
std::vector<bool> convs_with_relu(const Graph& graph, const std::vector<int>& uses,
                                  const std::vector<int>& chain_of) {
  std::vector<bool> fused(graph.size(), false);
  for (size_t pos = 0; pos < graph.size(); ++pos) {
    const Node& relu = graph.nodes()[pos];
    if (relu.op != OpKind::Relu || relu.inputs.size() != 1 || chain_of[pos] >= 0) continue;
    const auto in = static_cast<size_t>(relu.inputs[0]);
    const Node& conv = graph.nodes()[in];
    if (conv.op == OpKind::Conv && conv.meta.dtype == DType::kF32 && conv.meta == relu.meta &&
        uses[in] == 1 && chain_of[in] < 0)
      fused[in] = true;
  }
  return fused;
}

/// Per-op wall times of one interpret() call, logged under the perf topic when it ends.
class NodeTimes {
 public:
  NodeTimes() : on_(log_enabled(LogTopic::kPerf)) {}
  bool on() const { return on_; }
  void add(OpKind op, double ms) {
    Entry& e = by_op_[op];
    e.ms += ms;
    ++e.count;
    total_ms_ += ms;
  }
  void add_chain(size_t nodes, double ms) {
    chain_ms_ += ms;
    ++chains_;
    chain_nodes_ += nodes;
    total_ms_ += ms;
  }
  void log_summary(size_t nodes) const {
    std::vector<std::pair<OpKind, Entry>> rows(by_op_.begin(), by_op_.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
    char buf[96];
    std::snprintf(buf, sizeof buf, "interpreter: %zu nodes in %.3f ms;", nodes, total_ms_);
    std::string msg = buf;
    for (const auto& [op, e] : rows) {
      std::snprintf(buf, sizeof buf, " %s %.3f ms (%d)", op_name(op), e.ms, e.count);
      msg += buf;
    }
    if (chains_ > 0) {
      std::snprintf(buf, sizeof buf, "; fused elementwise chains %.3f ms (%d chains of %zu nodes)",
                    chain_ms_, chains_, chain_nodes_);
      msg += buf;
    }
    log(LogTopic::kPerf, msg);
  }

 private:
  struct Entry {
    double ms = 0;
    int count = 0;
  };
  bool on_;
  double total_ms_ = 0, chain_ms_ = 0;
  int chains_ = 0;
  size_t chain_nodes_ = 0;
  std::map<OpKind, Entry> by_op_;
};

/// After a chain's value exists: its inputs from outside the chain are released after their last
/// use, as node by node.
void release_chain_inputs(const Graph& graph, std::span<const size_t> chain, std::vector<int>& uses,
                          std::vector<const HostTensor*>& value, std::vector<HostTensor>& owned) {
  for (size_t m : chain)
    for (NodeId in : graph.nodes()[m].inputs) {
      const auto i = static_cast<size_t>(in);
      if (std::find(chain.begin(), chain.end(), i) != chain.end()) continue;  // never materialised
      if (--uses[i] == 0 && value[i] == &owned[i]) {
        owned[i] = HostTensor();
        value[i] = nullptr;
      }
    }
}

/// Evaluates a chain of elementwise nodes (eager/interpreter_chain.h) at its last member: that
/// node's value is computed, the others are never materialised; inputs from outside the chain
/// are released after their last use, as node by node.
Status run_chain(const Graph& graph, std::span<const size_t> chain, std::vector<int>& uses,
                 std::vector<const HostTensor*>& value, std::vector<HostTensor>& owned,
                 NodeTimes& times) {
  const auto start =
      times.on() ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  const Node& last = graph.nodes()[chain.back()];
  const auto id = static_cast<size_t>(last.id);
  owned[id] = HostTensor::uninitialized(last.meta);
  Status s = eager::eval_chain(graph, chain, value, owned[id]);
  if (!s.ok())
    return s.with_context("nodes %" + std::to_string(graph.nodes()[chain.front()].id) + "..%" +
                          std::to_string(last.id) + " (fused elementwise chain)");
  if (times.on())
    times.add_chain(chain.size(), std::chrono::duration<double, std::milli>(
                                      std::chrono::steady_clock::now() - start)
                                      .count());
  value[id] = &owned[id];
  release_chain_inputs(graph, chain, uses, value, owned);
  return {};
}

/// For each chain, the position of the Conv whose output pass applies it (eval_conv_then), or
/// -1: an f32 Conv of the chain's shape outside every chain whose every reader is a member.
std::vector<int> convs_before_chains(const Graph& graph, const std::vector<int>& uses,
                                     const std::vector<std::vector<size_t>>& chains,
                                     const std::vector<int>& chain_of,
                                     const std::vector<bool>& with_relu) {
  std::vector<int> conv_of(chains.size(), -1);
  const auto& nodes = graph.nodes();
  for (size_t c = 0; c < chains.size(); ++c) {
    const Shape& shape = nodes[chains[c].back()].meta.shape;
    std::map<size_t, int> reads;  // outside values read by members, and how often
    for (size_t m : chains[c])
      for (NodeId in : nodes[m].inputs)
        if (const auto i = static_cast<size_t>(in); chain_of[i] != static_cast<int>(c)) ++reads[i];
    for (const auto& [i, count] : reads) {
      const Node& conv = nodes[i];
      if (conv.op == OpKind::Conv && conv.meta.dtype == DType::kF32 && conv.meta.shape == shape &&
          chain_of[i] < 0 && !with_relu[i] && uses[i] == count) {
        conv_of[c] = static_cast<int>(i);
        break;
      }
    }
  }
  return conv_of;
}

}  // namespace

Expected<std::vector<HostTensor>> interpret(const Graph& graph,
                                            std::span<const HostTensor* const> inputs,
                                            std::span<const HostTensor* const> constants) {
  const size_t n = graph.size();
  std::vector<int> uses = graph.use_counts();
  std::vector<HostTensor> owned(n);         // values computed here
  std::vector<const HostTensor*> value(n);  // every node's value (owned or the caller's)
  std::vector<const HostTensor*> args;
  NodeTimes times;
  const std::vector<std::vector<size_t>> chains = eager::find_chains(graph);
  std::vector<int> chain_of(n, -1);
  for (size_t c = 0; c < chains.size(); ++c)
    for (size_t pos : chains[c]) chain_of[pos] = static_cast<int>(c);
  const std::vector<bool> with_relu = convs_with_relu(graph, uses, chain_of);
  const std::vector<int> conv_of = convs_before_chains(graph, uses, chains, chain_of, with_relu);
  std::vector<int> chain_after(n, -1);  // per Conv position, the chain it may apply
  for (size_t c = 0; c < chains.size(); ++c)
    if (conv_of[c] >= 0) chain_after[static_cast<size_t>(conv_of[c])] = static_cast<int>(c);
  std::vector<bool> applied(chains.size(), false);  // chains their Conv applied
  // Sources first, and one-element fills (a written-out activation's literals): a chain
  // applied by its Conv reads its one-element operands then.
  for (const Node& node : graph.nodes()) {
    const size_t id = static_cast<size_t>(node.id);
    if (node.op == OpKind::Input) {
      KILN_RETURN_IF_ERROR(bind_source(node, inputs, "input", &value[id]));
    } else if (node.op == OpKind::Constant) {
      KILN_RETURN_IF_ERROR(bind_source(node, constants, "constant", &value[id]));
    } else if (node.op == OpKind::Full && node.inputs.empty() && node.meta.numel() == 1) {
      owned[id] = HostTensor(node.meta);
      if (Status s = eager::eval_node(node, {}, owned[id]); !s.ok())
        return s.with_context("node %" + std::to_string(node.id) + " (full)");
      value[id] = &owned[id];
    }
  }
  for (size_t pos = 0; pos < n; ++pos) {
    const Node& node = graph.nodes()[pos];
    const size_t id = static_cast<size_t>(node.id);
    if (node.op == OpKind::Input || node.op == OpKind::Constant || value[id] != nullptr) continue;
    if (const int c = chain_of[pos]; c >= 0) {  // a fused chain runs at its last member
      const auto& chain = chains[static_cast<size_t>(c)];
      if (chain.back() != pos) continue;
      if (applied[static_cast<size_t>(c)]) {  // its Conv's bytes are the chain's value
        const auto conv = static_cast<size_t>(conv_of[static_cast<size_t>(c)]);
        owned[id].meta = node.meta;
        owned[id].data = std::move(owned[conv].data);
        value[id] = &owned[id];
        release_chain_inputs(graph, chain, uses, value, owned);
      } else {
        KILN_RETURN_IF_ERROR(run_chain(graph, chain, uses, value, owned, times));
      }
      continue;
    }
    args.clear();
    for (NodeId in : node.inputs) {
      if (in < 0 || in >= node.id || value[static_cast<size_t>(in)] == nullptr)
        return internal_error("node %" + std::to_string(node.id) + " reads %" + std::to_string(in) +
                              ", which is not an earlier live value");
      args.push_back(value[static_cast<size_t>(in)]);
    }
    const auto start =
        times.on() ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    Status s;
    if (reshape_in_place(node, uses, value, owned) ||
        (node.op == OpKind::Relu && with_relu[static_cast<size_t>(node.inputs[0])])) {
      // The last reader of an intermediate reshapes it, or the Relu already applied with its
      // Conv: the input's bytes are the result as they are.
      owned[id].meta = node.meta;
      owned[id].data = std::move(owned[static_cast<size_t>(node.inputs[0])].data);
    } else if (with_relu[pos]) {
      owned[id] = HostTensor::uninitialized(node.meta);
      s = eager::eval_conv_relu(node, args, owned[id]);
    } else if (const std::optional<eager::PointwiseChain> chain =
                   chain_after[pos] < 0
                       ? std::nullopt
                       : eager::PointwiseChain::make(
                             graph, chains[static_cast<size_t>(chain_after[pos])], node.id, value)) {
      owned[id] = HostTensor::uninitialized(node.meta);
      s = eager::eval_conv_then(node, args, owned[id], *chain);
      applied[static_cast<size_t>(chain_after[pos])] = true;
    } else {
      owned[id] = eager::writes_every_element(node.op) ? HostTensor::uninitialized(node.meta)
                                                       : HostTensor(node.meta);
      s = eager::eval_node(node, args, owned[id]);
    }
    if (times.on())
      times.add(node.op,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
    if (!s.ok())
      return s.with_context("node %" + std::to_string(node.id) + " (" + op_name(node.op) + ")");
    value[id] = &owned[id];
    for (NodeId in : node.inputs) {  // free intermediates after their last use
      const size_t i = static_cast<size_t>(in);
      if (--uses[i] == 0 && value[i] == &owned[i]) {
        owned[i] = HostTensor();
        value[i] = nullptr;
      }
    }
  }
  if (times.on()) times.log_summary(n);
  std::vector<HostTensor> results;
  results.reserve(graph.outputs().size());
  for (NodeId out : graph.outputs()) {
    if (out < 0 || static_cast<size_t>(out) >= n || value[static_cast<size_t>(out)] == nullptr)
      return internal_error("graph output %" + std::to_string(out) + " has no value");
    const size_t i = static_cast<size_t>(out);
    // An owned value is moved out at its last listing among the outputs, otherwise copied.
    const bool later =
        std::find(graph.outputs().begin() + static_cast<std::ptrdiff_t>(results.size() + 1),
                  graph.outputs().end(), out) != graph.outputs().end();
    if (value[i] == &owned[i] && !later)
      results.push_back(std::move(owned[i]));
    else
      results.push_back(*value[i]);
  }
  return results;
}

Expected<HostTensor> interpret_op(OpKind op, std::span<const HostTensor* const> inputs,
                                  const Attrs& attrs) {
  Graph graph;
  std::vector<NodeId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr)
      return invalid_argument(std::string(op_name(op)) + ": input " + std::to_string(i) +
                              " is null");
    ids.push_back(graph.add_input(inputs[i]->meta));
  }
  KILN_ASSIGN_OR_RETURN(NodeId node, graph.add(op, std::move(ids), attrs));
  graph.set_outputs({node});
  KILN_ASSIGN_OR_RETURN(std::vector<HostTensor> outs, interpret(graph, inputs, {}));
  return std::move(outs[0]);
}

}  // namespace kiln
