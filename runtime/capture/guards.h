/// \file guards.h
/// Guards: the facts about a call's inputs that a traced graph depends on. Checked on every
/// call by a flat loop over precomputed records (no allocation, no strings); descriptions are
/// built only when a guard fails and a log asks for them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "capture/trace.h"
#include "kiln/tensor.h"

namespace kiln {

enum class GuardKind : uint8_t {
  kArity,          // number of tensor arguments
  kDType,          // input dtype
  kDevice,         // input device kind
  kRank,           // input rank
  kSize,           // exact size of one input dim
  kConstantAlive,  // a captured tensor still exists (its identity)
  kScalarKind,     // a scalar argument is an integer (or floating-point)
  kScalarValue,    // the exact value of a scalar argument turned into a C++ number
  kShapes,         // the symbolic size guards of the trace's ShapeEnv (one flat program)
};
const char* guard_kind_name(GuardKind kind);

struct Guard {
  GuardKind kind;
  int32_t index = 0;  // input or captured-constant index
  int32_t dim = 0;
  int64_t expected = 0;  // kScalarValue: the integer, or the double's bits
};

/// The arguments of one call, as guards see them.
struct CallArgs {
  const std::vector<Tensor>& tensors;
  const std::vector<Scalar>& scalars;
};

class GuardSet {
 public:
  /// Guards for a trace that saw `args` and captured `constants`; `fn_name` for provenance.
  /// Dims bound to a size symbol (`sources`) get no exact-size guard: the frozen `env`
  /// checks them instead, from the symbol values read at those dims.
  static GuardSet build(const CallArgs& args, const std::vector<CapturedConstant>& constants,
                        std::string fn_name, std::shared_ptr<ShapeEnv> env = nullptr,
                        std::vector<SymbolSource> sources = {},
                        std::vector<bool> specialized_scalars = {});

  /// The symbol values of a call (one per symbol id) into `out`, read from the argument dims.
  /// Valid once the rank guards passed.
  void bind(const std::vector<Tensor>& tensors, std::vector<int64_t>& out) const;
  const ShapeEnv* shape_env() const { return env_.get(); }
  const std::vector<SymbolSource>& symbol_sources() const { return sources_; }

  /// Index of the first failing guard, or -1 when all pass.
  int first_failure(const CallArgs& args, const std::vector<CapturedConstant>& constants) const;
  bool check(const Guard& g, const CallArgs& args,
             const std::vector<CapturedConstant>& constants) const;
  std::vector<int> all_failures(const CallArgs& args,
                                const std::vector<CapturedConstant>& constants) const;

  /// "input 0 dim 1 size: expected 8, got 16 (from argument 0 of 'fn')".
  std::string describe_failure(int i, const CallArgs& args,
                               const std::vector<CapturedConstant>& constants) const;
  /// One guard a line, with where it came from.
  std::string to_string(const std::vector<CapturedConstant>& constants) const;
  const std::vector<Guard>& guards() const { return guards_; }

 private:
  std::string provenance(const Guard& g, const std::vector<CapturedConstant>& constants) const;
  std::vector<Guard> guards_;
  std::string fn_name_;
  std::shared_ptr<ShapeEnv> env_;
  std::vector<SymbolSource> sources_;
};

}  // namespace kiln
