#include "eager/interpreter_chain.h"

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "eager/elementwise_loops.h"
#include "eager/interpreter_ops.h"
#include "eager/parallel.h"

namespace kiln::eager {
namespace {

/// Output elements per block: the block buffers of a chain of ten nodes stay within 160 KiB.
constexpr int64_t kBlock = 4096;
/// Elements per block of a chain applied in place (PointwiseChain): the ranges a kernel has
/// just written are a row or a few, and the block buffers of 8 members stay on the stack.
constexpr int64_t kPointwiseBlock = 1024;
/// Nodes per chain at most (longer runs are split), and how far in graph order a chain looks
/// for its members.
constexpr size_t kMaxChain = 32, kWindow = 64;

/// Whether node `n` may be a chain member: unary or binary arithmetic with f32 inputs and output.
bool member(const Graph& graph, const Node& n) {
  if (!block_elementwise(n.op) || n.meta.dtype != DType::kF32) return false;
  return std::all_of(n.inputs.begin(), n.inputs.end(), [&](NodeId in) {
    return in >= 0 && static_cast<size_t>(in) < graph.size() &&
           graph.node(in).meta.dtype == DType::kF32;
  });
}

}  // namespace

std::vector<std::vector<size_t>> find_chains(const Graph& graph) {
  const auto& nodes = graph.nodes();
  const std::vector<int> uses = graph.use_counts();
  std::vector<char> free_member(nodes.size());  // a member not yet in a chain
  for (size_t i = 0; i < nodes.size(); ++i) free_member[i] = member(graph, nodes[i]);
  std::vector<int> slot(nodes.size(), -1);  // a node's index among the current candidates
  std::vector<std::vector<size_t>> chains;
  std::vector<size_t> cand;
  std::vector<int> inside;  // reads of each candidate by later candidates
  for (size_t first = 0; first < nodes.size(); ++first) {
    if (!free_member[first]) continue;
    // Candidates: members of the same shape within a window of graph order. The longest prefix
    // in which every value but the last is read only by the prefix's later members (graph
    // outputs count as reads from outside) is the chain.
    const Shape& shape = nodes[first].meta.shape;
    cand.assign(1, first);
    inside.assign(1, 0);
    slot[first] = 0;
    int open = 0;  // candidates before the newest whose reads are not all inside yet
    size_t best = 0;
    for (size_t q = first + 1; q < nodes.size() && q < first + kWindow && cand.size() < kMaxChain;
         ++q) {
      if (!free_member[q] || nodes[q].meta.shape != shape) continue;
      // The previous newest candidate is no longer the last: it counts as open until closed.
      open += inside.back() != uses[cand.back()];
      for (NodeId in : nodes[q].inputs) {
        const int k = slot[static_cast<size_t>(in)];
        if (k < 0) continue;
        open -= inside[static_cast<size_t>(k)] != uses[cand[static_cast<size_t>(k)]];
        ++inside[static_cast<size_t>(k)];
        open += inside[static_cast<size_t>(k)] != uses[cand[static_cast<size_t>(k)]];
      }
      slot[q] = static_cast<int>(cand.size());
      cand.push_back(q);
      inside.push_back(0);
      if (open == 0) best = cand.size();
    }
    for (size_t q : cand) slot[q] = -1;
    if (best < 2) continue;
    cand.resize(best);
    for (size_t q : cand) free_member[q] = 0;
    chains.push_back(cand);
  }
  return chains;
}

Status eval_chain(const Graph& graph, std::span<const size_t> chain,
                  std::span<const HostTensor* const> value, HostTensor& out) {
  const auto& nodes = graph.nodes();
  const size_t length = chain.size();
  const Node& last = nodes[chain.back()];
  const Shape& shape = last.meta.shape;
  const int64_t total = last.meta.numel();
  const std::vector<int64_t> contiguous = contiguous_strides(shape);
  // Per member, per input: the index of the member it reads, or its tensor's operand; and the
  // member's loop nest, built once for every block.
  struct Input {
    int member = -1;
    BlockOperand operand;
  };
  std::vector<std::vector<Input>> inputs(length);
  std::vector<BlockPlan> plans(length);
  for (size_t m = 0; m < length; ++m) {
    std::vector<std::vector<int64_t>> strides;
    for (NodeId id : nodes[chain[m]].inputs) {
      Input in;
      const auto at = static_cast<size_t>(id);
      const auto it = std::find(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(m), at);
      if (it != chain.begin() + static_cast<std::ptrdiff_t>(m)) {
        in.member = static_cast<int>(it - chain.begin());
        strides.push_back(contiguous);
      } else {
        const HostTensor* t = value[at];
        if (t == nullptr || t->meta.dtype != DType::kF32)
          return internal_error("chain input %" + std::to_string(id) + " is not a live f32 value");
        strides.push_back(broadcast_strides(t->meta.shape, shape));
        in.operand.data = t->ptr<float>();
        in.operand.contiguous = t->meta.shape == shape;
      }
      inputs[m].push_back(in);
    }
    plans[m] = plan_block(nodes[chain[m]], strides);
  }
  if (total == 0) return {};
  float* y = out.ptr<float>();
  std::mutex mu;
  Status failed;
  const int64_t block = std::min(kBlock, total), blocks = (total + block - 1) / block;
  parallel_for(blocks, std::max<int64_t>(1, kParallelGrain / block), [&](int64_t b, int64_t e) {
    // Not zeroed: every element of a block is written before it is read.
    const auto buffers =
        std::make_unique_for_overwrite<float[]>(static_cast<size_t>(length - 1) * block);
    std::vector<BlockOperand> ops;
    for (int64_t blk = b; blk < e; ++blk) {
      const int64_t lo = blk * block, hi = std::min(total, lo + block);
      for (size_t m = 0; m < length; ++m) {
        ops.clear();
        for (const Input& in : inputs[m]) {
          if (in.member < 0) {
            ops.push_back(in.operand);
          } else {
            ops.push_back(BlockOperand{buffers.get() + in.member * block, lo, true});
          }
        }
        const bool is_last = m + 1 == length;
        Status s =
            eval_elementwise_block(nodes[chain[m]], plans[m], ops,
                                   is_last ? y : buffers.get() + m * block,
                                   is_last ? 0 : lo, lo, hi);
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (failed.ok()) failed = s;
          return;
        }
      }
    }
  });
  return failed;
}

std::optional<PointwiseChain> PointwiseChain::make(const Graph& graph,
                                                   std::span<const size_t> chain, NodeId source,
                                                   std::span<const HostTensor* const> value) {
  const auto& nodes = graph.nodes();
  if (chain.empty() || source < 0 || static_cast<size_t>(source) >= graph.size()) return {};
  const Shape& shape = nodes[chain.back()].meta.shape;
  if (graph.node(source).meta.shape != shape || graph.node(source).meta.dtype != DType::kF32)
    return {};
  PointwiseChain pc;
  pc.graph_ = &graph;
  pc.chain_.assign(chain.begin(), chain.end());
  // Each member's operands read one element (a one-element tensor) or walk along the range
  // (the source, earlier members): a one-dimensional nest as long as any range.
  constexpr int64_t kAny = int64_t{1} << 40;
  for (size_t m = 0; m < chain.size(); ++m) {
    const Node& node = nodes[chain[m]];
    if (node.meta.shape != shape) return {};
    std::vector<Input> ins;
    std::vector<int64_t> steps;
    for (NodeId id : node.inputs) {
      Input in;
      const auto at = static_cast<size_t>(id);
      const auto end = chain.begin() + static_cast<std::ptrdiff_t>(m);
      if (const auto it = std::find(chain.begin(), end, at); it != end) {
        in.member = static_cast<int>(it - chain.begin());
        steps.push_back(1);
      } else if (id == source) {
        steps.push_back(1);
      } else {
        const HostTensor* t = at < value.size() ? value[at] : nullptr;
        if (t == nullptr || t->meta.dtype != DType::kF32 || t->meta.numel() != 1) return {};
        in.scalar = t->ptr<float>();
        steps.push_back(0);
      }
      ins.push_back(in);
    }
    BlockPlan plan;
    if (steps.size() == 1) plan.unary = LoopNest<1>{{kAny}, {{{steps[0]}}}};
    else if (steps.size() == 2) plan.binary = LoopNest<2>{{kAny}, {{{steps[0]}, {steps[1]}}}};
    else return {};
    pc.inputs_.push_back(std::move(ins));
    pc.plans_.push_back(std::move(plan));
  }
  return pc;
}

PointwiseChain::PointwiseChain(PointwiseChain&& other) noexcept
    : graph_(other.graph_),
      chain_(std::move(other.chain_)),
      inputs_(std::move(other.inputs_)),
      plans_(std::move(other.plans_)) {}

void PointwiseChain::apply(float* y, int64_t n) const {
  const auto& nodes = graph_->nodes();
  const size_t length = chain_.size();
  const int64_t block = std::min(kPointwiseBlock, n);
  if (block <= 0) return;
  // Every member writes a block buffer, the last one too (the row loops take their operands
  // and result as unaliased), which is then copied over the source's block. On the stack for
  // chains of up to 8 members (HardSwish has 5), else on the heap.
  std::array<float, 8 * kPointwiseBlock> small;
  std::unique_ptr<float[]> large;
  float* buffers = small.data();
  if (length * static_cast<size_t>(block) > small.size()) {
    large = std::make_unique_for_overwrite<float[]>(length * static_cast<size_t>(block));
    buffers = large.get();
  }
  std::array<BlockOperand, 2> ops;
  for (int64_t lo = 0; lo < n; lo += block) {
    const int64_t hi = std::min(n, lo + block);
    for (size_t m = 0; m < length; ++m) {
      const std::vector<Input>& ins = inputs_[m];
      for (size_t k = 0; k < ins.size(); ++k) {
        if (ins[k].member >= 0)
          ops[k] = BlockOperand{buffers + ins[k].member * block, lo, true};
        else if (ins[k].scalar != nullptr)
          ops[k] = BlockOperand{ins[k].scalar, 0, false};
        else
          ops[k] = BlockOperand{y, 0, true};  // the source
      }
      Status s = eval_elementwise_block(nodes[chain_[m]], plans_[m],
                                        std::span<const BlockOperand>(ops.data(), ins.size()),
                                        buffers + m * block, lo, lo, hi);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (failed_.ok()) failed_ = s;
        return;
      }
    }
    const float* result = buffers + (length - 1) * block;
    std::copy(result, result + (hi - lo), y + lo);
  }
}

Status PointwiseChain::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

}  // namespace kiln::eager
