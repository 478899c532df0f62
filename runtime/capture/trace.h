/// \file trace.h
/// Tracing: while a TraceScope is active on a thread, every op on tensors is recorded into the
/// current graph segment instead of running. Concrete tensors met during the trace are captured
/// as constants (weights), with their identity guarded. A graph break (a host read, a host
/// function, an op without device lowering, a print) compiles and runs the segment so far on
/// the real arguments, runs the break on the CPU, and starts a new segment: the result is a
/// Program that replays without calling the traced function.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/program.h"
#include "graph/graph.h"
#include "graph/graph_key.h"
#include "kiln/compile.h"
#include "tensor/tensor_impl.h"

namespace kiln {

struct CapturedConstant {
  std::weak_ptr<TensorImpl> tensor;  // not kept alive by the cache: identity is guarded
  TensorMeta meta;
  Device device = Device::cpu();
  std::string loc;  // where it was first used
};

/// Compiled segments shared by every trace of one compiled function, keyed by the segment's
/// structure and target (graph/graph_key.h), so that a re-trace reuses the segments that did not
/// change. Bounded by the function's recompile limit.
using SegmentCache = std::unordered_map<GraphKey, std::shared_ptr<Executable>, GraphKeyHash>;

/// How one dim of an argument is traced.
struct DimPolicy {
  enum class Kind : uint8_t { kStatic, kDynamic, kMarked } kind = Kind::kStatic;
  int64_t min = 2, max = SymRange::kPosInf;  // kMarked: the range given to mark_dynamic
  bool soft = false;                         // kMarked by maybe_mark_dynamic
};
/// One entry per argument, one DimPolicy per dim (empty: every dim static).
using DynamicSpec = std::vector<std::vector<DimPolicy>>;

/// Where a size symbol's value comes from: dim `dim` of tensor argument `arg`.
struct SymbolSource {
  int32_t arg = 0;
  int32_t dim = 0;
};

class TraceContext {
 public:
  /// `args`: the tensor arguments, then one rank-0 literal per scalar argument (`num_scalars`).
  TraceContext(std::vector<Tensor> args, Device device, CompileOptions options, SegmentCache* cache,
               DynamicSpec spec = {}, size_t num_scalars = 0);

  /// Placeholder for argument `index`.
  Tensor argument(size_t index);
  /// Node in the current segment for any tensor used by a traced op.
  NodeId node_for(const Tensor& t, const std::string& loc);
  /// Placeholder for `node` of the current segment.
  Tensor placeholder(NodeId node);
  Graph& graph() { return graph_; }
  /// Source location of the op that produced a placeholder of the current segment ("" if none).
  std::string producer_loc(const TensorImpl& impl) const {
    return impl.segment == segment_ && impl.node >= 0 ? graph_.node(impl.node).loc : "";
  }

  /// A graph break that reads `t` on the host: runs the segment so far, guards the value.
  HostTensor host_read(const Tensor& t, const std::string& what, const std::string& loc);
  /// Tensor::item(): a graph break that reads `t`'s value without guarding it; the result is
  /// a traced Scalar bound to `t`'s slot.
  Scalar read_scalar(const Tensor& t, const std::string& loc);
  /// A traced Scalar parameter: scalar argument `index`, a graph value read at every call.
  Scalar scalar_argument(size_t index, const Scalar& value);
  /// Turning the traced scalar in `t` into a C++ number: a guard on its value.
  void specialize_scalar(const std::shared_ptr<TensorImpl>& t, const std::string& loc);
  /// Scalar argument `index` turned into a C++ number: its value is guarded.
  void specialize_scalar_argument(size_t index) { specialized_scalars_.at(index) = true; }
  /// Scalar arguments whose value was turned into a C++ number (value-guarded).
  const std::vector<bool>& specialized_scalars() const { return specialized_scalars_; }
  /// A graph break that runs `fn` on the CPU (host functions, ops without device lowering).
  std::vector<Tensor> host_call(const std::string& name, const HostFunction& fn,
                                const std::vector<Tensor>& args, const std::string& reason,
                                const std::string& loc);
  /// A graph break that prints `t` (and prints again on every replay).
  void print(const std::string& label, const Tensor& t, const std::string& loc);

  /// A new unbacked size symbol (a masked_select's length) defined in the current segment;
  /// `hint` stands in until the segment runs.
  int unbacked_symbol(int64_t hint, const std::string& source);
  /// When one of `inputs` has a length that only running the current segment reveals, the
  /// segment is run now (no graph break: nothing runs on the host); later ops are recorded in
  /// the next segment with that length as an input dim. Called after each compaction op and,
  /// as a safety net, before every op records.
  void sync_unbacked(const std::vector<Tensor>& inputs);
  /// Decides `rel` when it involves an unbacked symbol: the segment that defines the symbol runs
  /// first if it has not (its length is then known), and the outcome is checked at this point
  /// of every replay (a kSizeGuard step; a replay where it differs traces again). Nothing when
  /// the relation involves no unbacked symbol (the ShapeEnv guards it at the call's entry).
  std::optional<bool> decide_data_dependent(const SymRel& rel, const std::string& why);
  /// The value of `v` when it involves an unbacked symbol, checked the same way (`v == value`);
  /// nothing otherwise.
  std::optional<int64_t> data_dependent_value(const SymInt& v, const std::string& why);

  /// Ends the trace with `outputs` and returns the program.
  Program finish(const std::vector<Tensor>& outputs);
  /// A slot's value as computed during the trace.
  const Tensor& slot_value(int32_t slot) const { return slots_.at(static_cast<size_t>(slot)); }

  std::vector<CapturedConstant> constants;
  bool active = true;

  /// The size symbols of this trace, their facts and guards.
  ShapeEnv& shape_env() { return *env_; }
  std::shared_ptr<ShapeEnv> take_shape_env() { return env_; }
  /// Symbol id -> the argument dim it is read from.
  const std::vector<SymbolSource>& symbol_sources() const { return sources_; }
  /// The values of the symbols in this trace (their hints).
  std::vector<int64_t> symbol_hints() const;
  /// True when `node` was made by this trace and the trace is still recording.
  bool owns(const detail::SymSizeNode& node) const;
  const std::string& name() const { return options_.name; }

 private:
  /// A placeholder whose value lives in `slot` (arguments, break results).
  Tensor slot_placeholder(int32_t slot);
  /// The slot holding `t`'s value, running the current segment if `t` is computed in it.
  int32_t slot_of(const Tensor& t);
  /// Compiles and runs the current segment; every live placeholder of it gets a slot.
  void flush(const std::vector<NodeId>& extra_outputs);
  void start_break(const GraphBreak& why);
  /// True when `sides` involve an unbacked symbol; runs the current segment first when one of
  /// them is defined there (so its length is known).
  bool reveal_unbacked(std::initializer_list<const SymInt*> sides, const std::string& what);
  void add_size_guard(const SymRel& rel, const std::string& why);
  int32_t new_slot(Tensor value);
  std::vector<Tensor> locked_constants() const;

  std::vector<Tensor> slots_;
  std::vector<int> pending_unbacked_;  // unbacked symbols the current segment defines
  size_t num_tensor_args_ = 0;
  std::vector<bool> specialized_scalars_;
  std::shared_ptr<ShapeEnv> env_;
  std::vector<SymbolSource> sources_;
  std::vector<SymShape> arg_syms_;
  Device device_;
  CompileOptions options_;
  SegmentCache* cache_;
  Program program_;
  Graph graph_;
  int segment_ = 0;
  std::vector<int32_t> segment_inputs_;               // Input index i of graph_ reads this slot
  std::map<int32_t, NodeId> input_of_slot_;           // slot -> Input node in graph_
  std::vector<std::weak_ptr<TensorImpl>> live_;       // placeholders made in this segment
  std::unordered_map<TensorImpl*, NodeId> captured_;  // constants with a node in graph_
  std::vector<int32_t> extra_slots_;                  // slots of flush()'s extra outputs
  std::unordered_map<TensorImpl*, int64_t> constant_index_;  // captured tensor -> constants[i]
  // The captured constants, alive until the trace ends: one made and dropped inside the traced
  // code (a temporary) must still be there when its segment runs. Entries hold them weakly.
  std::vector<Tensor> held_constants_;
};

/// The exact value of a one-element host tensor (integers as int64).
Scalar scalar_of(const HostTensor& h);
/// A host tensor of `meta` with every element `value` (integers exactly; i32 wraps).
HostTensor filled_host(const TensorMeta& meta, const Scalar& value);
/// Full's attributes for `value` (exact for integers).
void set_full_value(Attrs& attrs, const Scalar& value);
/// The rank-0 tensor of traced scalar `s`, cast to `dtype`.
Tensor traced_scalar_tensor(const Scalar& s, DType dtype, const Loc& loc);
/// Turning traced scalar `t` into a C++ number inside its trace: a guard on the value.
void specialize_traced_scalar(const std::shared_ptr<TensorImpl>& t, const std::string& loc);

/// The trace active on this thread, or nullptr.
TraceContext* current_trace();

/// Makes `trace` current for its lifetime (not nestable).
class TraceScope {
 public:
  explicit TraceScope(TraceContext* trace);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  TraceContext* trace_;
};

/// Suspends the active trace on this thread for its lifetime (host functions run eagerly).
class PauseTrace {
 public:
  PauseTrace();
  ~PauseTrace();
  PauseTrace(const PauseTrace&) = delete;
  PauseTrace& operator=(const PauseTrace&) = delete;

 private:
  TraceContext* saved_;
  uint64_t saved_id_;
};

/// The id of the trace active on this thread (0 if none).
uint64_t current_trace_id();
std::string loc_str(const Loc& loc);

}  // namespace kiln
