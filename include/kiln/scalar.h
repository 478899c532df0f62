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
#include <type_traits>

#include "kiln/sym_size.h"

namespace kiln {

struct TensorImpl;

class Scalar {
 public:
  Scalar() = default;
  template <std::integral T>
  Scalar(T v) : int_(static_cast<int64_t>(v)), is_int_(true) {}  // NOLINT: implicit
  template <std::floating_point T>
  Scalar(T v) : double_(static_cast<double>(v)) {}  // NOLINT: implicit
  /// A size: specialised to its value, as its conversion to int64_t does.
  Scalar(const SymSize& v) : int_(v.value()), is_int_(true) {}  // NOLINT: implicit

  /// True for integers (exact int64), false for floating-point values.
  bool is_integral() const { return is_int_; }
  /// True inside a trace when the value is a graph value (see the file comment).
  bool is_traced() const { return traced_ != nullptr; }

  /// The value; specialises a traced scalar (records a guard) naming `loc`.
  double to_double(std::source_location loc = std::source_location::current()) const;
  /// The value as an integer (exact for integers; floats truncate toward zero, clamp to the
  /// int64 range, NaN is 0); specialises.
  int64_t to_int(std::source_location loc = std::source_location::current()) const;
  /// `static_cast<T>(s)` for any arithmetic T (bool: value != 0); specialises. A traced scalar
  /// can only be converted inside its own trace; anywhere else (a host function, a later
  /// trace) it is an error, since no guard could protect the value.
  template <typename T>
  requires std::is_arithmetic_v<T>
  explicit operator T() const {
    if constexpr (std::is_same_v<T, bool>) {
      return is_int_ ? to_int() != 0 : to_double() != 0.0;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(to_int());
    } else {
      return static_cast<T>(to_double());
    }
  }

  /// The value seen when traced (or the value), without specialising: no guard is recorded,
  /// so inside a trace these are for messages and heuristics only.
  double hint_double() const { return is_int_ ? static_cast<double>(int_) : double_; }
  int64_t hint_int() const { return is_int_ ? int_ : saturate(double_); }
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
  /// double -> int64 as the interpreter casts: truncate, clamp, NaN -> 0.
  static int64_t saturate(double v) {
    if (!(v == v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return static_cast<int64_t>(v);
  }
  std::shared_ptr<TensorImpl> traced_;
};

}  // namespace kiln
