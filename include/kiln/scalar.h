/// \file scalar.h
/// kiln::Scalar: a number that stays exact (an int64 or a double) and, inside a compiled
/// function, may be a value of the graph rather than a constant baked into it.
///
/// Outside kiln::compile a Scalar is just its value. Inside a trace, two kinds of Scalar are
/// *traced*: a compiled function's parameter declared as `kiln::Scalar` (its value is a graph
/// input, read at every call, so a new value does not recompile), and `Tensor::item()` (the
/// value read from a one-element tensor). A traced Scalar used in tensor ops (`x * lr`,
/// `where(x > t, ...)`) enters the graph as a rank-0 tensor. Turning it into a C++ number
/// (to_double(), to_int(), the explicit conversions) specialises it: the trace continues with
/// the value seen and records a guard on it, so the compiled code is reused only for that
/// value — exactly like SymSize for sizes. docs/capture.md has the rules.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <source_location>
#include <string>

namespace kiln {

struct TensorImpl;

class Scalar {
 public:
  Scalar() = default;
  template <std::integral T>
  Scalar(T v) : int_(static_cast<int64_t>(v)), is_int_(true) {}  // NOLINT: implicit
  template <std::floating_point T>
  Scalar(T v) : double_(static_cast<double>(v)) {}  // NOLINT: implicit

  /// True for integers (exact int64), false for floating-point values.
  bool is_integral() const { return is_int_; }
  /// True inside a trace when the value is a graph value (see the file comment).
  bool is_traced() const { return traced_ != nullptr; }

  /// The value; specialises a traced scalar (records a guard) naming `loc`.
  double to_double(std::source_location loc = std::source_location::current()) const;
  /// The value as an integer (exact for integers, truncated for floats); specialises.
  int64_t to_int(std::source_location loc = std::source_location::current()) const;
  explicit operator double() const { return to_double(); }
  explicit operator int64_t() const { return to_int(); }

  /// The value seen when traced (or the value), without specialising.
  double hint_double() const { return is_int_ ? static_cast<double>(int_) : double_; }
  int64_t hint_int() const { return is_int_ ? int_ : static_cast<int64_t>(double_); }
  /// "3", "0.5", or "scalar(0.5, traced)".
  std::string str() const;

  /// Runtime: a traced scalar whose value lives in the rank-0 placeholder `t`.
  static Scalar traced(std::shared_ptr<TensorImpl> t, const Scalar& hint);
  const std::shared_ptr<TensorImpl>& traced_tensor() const { return traced_; }
  /// The same value, no longer traced.
  Scalar untraced() const;

 private:
  int64_t int_ = 0;
  double double_ = 0.0;
  bool is_int_ = false;
  std::shared_ptr<TensorImpl> traced_;
};

}  // namespace kiln
