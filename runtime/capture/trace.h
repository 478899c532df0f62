/// \file trace.h
/// Tracing: while a TraceScope is active on a thread, every op on tensors is recorded into the
/// scope's graph instead of running. Concrete tensors met during the trace are captured as
/// graph constants (weights), with their identity guarded.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/tensor_impl.h"
#include "graph/graph.h"

namespace kiln {

struct CapturedConstant {
  std::weak_ptr<TensorImpl> tensor;  // not kept alive by the cache: identity is guarded
  TensorMeta meta;
  Device device = Device::cpu();
  std::string loc;  // where it was first used
};

class TraceContext {
 public:
  Graph graph;
  std::vector<CapturedConstant> constants;
  bool active = true;

  /// Placeholder tensor for graph input `index`.
  Tensor input(const TensorMeta& meta, Device device);
  /// Node for any tensor used by a traced op: its own node, a captured constant, or a literal.
  NodeId node_for(const Tensor& t, const std::string& loc);
  Tensor placeholder(NodeId node);

 private:
  std::unordered_map<TensorImpl*, NodeId> captured_;
  Device device_ = Device::cpu();
};

/// The trace active on this thread, or nullptr.
TraceContext* current_trace();

/// Makes `trace` current for its lifetime (not nestable: tracing inside a trace is an error).
class TraceScope {
 public:
  explicit TraceScope(std::shared_ptr<TraceContext> trace);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
  const std::shared_ptr<TraceContext>& trace() const { return trace_; }

 private:
  std::shared_ptr<TraceContext> trace_;
};

/// Runs or records `op`: the single entry point of every Tensor op.
Tensor apply_op(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs, const Loc& loc);
std::string loc_str(const Loc& loc);

}  // namespace kiln
