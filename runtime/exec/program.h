/// \file program.h
/// A traced function as a straight-line program: compiled graph segments, separated by graph
/// breaks (host reads guarded by their value, host functions, CPU-only ops, prints). Values
/// live in numbered slots: the arguments first, then every step's outputs.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "eager/host_tensor.h"
#include "exec/executable.h"
#include "kiln/tensor.h"

namespace kiln {

struct CapturedConstant;

/// Why a graph ended, and where.
struct GraphBreak {
  std::string reason;  // "to_vector() of a traced tensor", "nonzero has no device lowering", ...
  std::string loc;     // "model.cpp:42" ("" if unknown)
};

struct ProgramStep {
  /// kScalarRead: Tensor::item(), a break whose value stays in its slot (replay: nothing).
  /// kSizeGuard: a decision on a data-dependent size (an unbacked symbol, known once the
  /// segment defining it ran), checked at its place in the program.
  enum class Kind { kSegment, kValueGuard, kHost, kPrint, kScalarRead, kSizeGuard };
  Kind kind = Kind::kSegment;
  std::shared_ptr<Executable> exe;    // kSegment
  std::vector<int32_t> in;            // slots read
  std::vector<int32_t> out;           // slots written
  HostTensor expected;                // kValueGuard: the value the trace saw
  SymRel size_guard;                  // kSizeGuard: the relation, which held at trace time
  HostFunction fn;                    // kHost
  std::vector<TensorMeta> out_metas;  // kHost: what later segments were compiled for
  std::string label;  // kHost: function name; kPrint: label; kValueGuard: what read it
  GraphBreak where;
  bool is_break = true;  // false: a value guard placed after an earlier break (not a new one)
};

/// Runs a kHost step's function on its inputs, with results on `device`. The execution layer
/// knows nothing of tracing: the caller (capture) supplies how a host function runs inside a
/// compiled-function call (capture/host_memo.h's run_host_function).
using HostStepRunner = std::function<std::vector<Tensor>(
    const ProgramStep& step, const std::vector<Tensor>& inputs, Device device)>;

/// What a failed value guard reports.
struct ValueGuardFailure {
  std::string description;
};

struct Program {
  int32_t num_args = 0;
  int32_t num_slots = 0;
  std::vector<ProgramStep> steps;
  std::vector<int32_t> outputs;
  Device device = Device::cpu();
  /// The trace's symbol count when it has unbacked symbols (0 otherwise): replay keeps one
  /// value per symbol and lets each segment fill in the lengths it reveals.
  int32_t num_symbols = 0;

  int graph_count() const;
  std::vector<GraphBreak> breaks() const;

  /// Runs the steps on `args` with the size symbols bound to `symbols` (one value per symbol
  /// id). Returns nullopt (and fills `failure`) when a value guard fails; prints of a failed
  /// replay are dropped so that the re-trace prints once.
  std::optional<std::vector<Tensor>> replay(const std::vector<Tensor>& args,
                                            const std::vector<Tensor>& constants,
                                            ValueGuardFailure* failure,
                                            const HostStepRunner& run_host,
                                            std::span<const int64_t> symbols = {}) const;
};

/// "label: [1, 2, 3]" for kiln::print.
std::string format_tensor(const std::string& label, const HostTensor& t);
bool host_equal(const HostTensor& a, const HostTensor& b);

}  // namespace kiln
