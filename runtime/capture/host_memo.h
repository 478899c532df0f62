/// \file host_memo.h
/// Host functions run once per call of a compiled function.
///
/// One call may try several cache entries (each replays until a value guard fails) and then
/// re-trace; each attempt reaches the host steps before its failing guard again. The memo of
/// the call remembers every host function it ran — by name, source line and occurrence — with
/// its CPU inputs and outputs; a later attempt of the same call that reaches the same
/// occurrence with equal inputs reuses the outputs instead of calling the function again, so
/// a host function's side effects happen once per call.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "eager/host_tensor.h"
#include "kiln/tensor.h"

namespace kiln {

class HostCallMemo {
 public:
  /// Starts another attempt of the call (a replay, the trace, or the eager run): occurrences
  /// count from zero again.
  void begin_attempt() { next_.clear(); }
  /// The occurrence number of the next call of `key` in this attempt.
  size_t next_occurrence(const std::string& key) { return next_[key]++; }
  /// Outputs recorded for occurrence `n` of `key` if its inputs equal `inputs`, else null.
  const std::vector<Tensor>* find(const std::string& key, size_t n,
                                  const std::vector<HostTensor>& inputs) const;
  void record(const std::string& key, size_t n, std::vector<HostTensor> inputs,
              std::vector<Tensor> outputs);

 private:
  struct Record {
    std::vector<HostTensor> inputs;
    std::vector<Tensor> outputs;
  };
  std::map<std::string, std::vector<Record>> records_;
  std::map<std::string, size_t> next_;
};

/// Runs a host function on CPU copies of `inputs` with the active trace paused; results are
/// moved to `device`. Inside a compiled-function call, equal inputs at the same `loc` and
/// occurrence reuse the call's earlier results (the memo above).
std::vector<Tensor> run_host_function(const HostFunction& fn, const std::string& name,
                                      const std::vector<Tensor>& inputs, Device device,
                                      const std::string& loc);

/// The memo of the innermost compiled-function call on this thread (null outside calls).
HostCallMemo* current_host_memo();

/// Makes `memo` current on this thread for its lifetime (nests: restores the previous one).
class HostMemoScope {
 public:
  explicit HostMemoScope(HostCallMemo* memo);
  ~HostMemoScope();
  HostMemoScope(const HostMemoScope&) = delete;
  HostMemoScope& operator=(const HostMemoScope&) = delete;

 private:
  HostCallMemo* saved_;
};

}  // namespace kiln
