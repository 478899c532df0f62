/// \file sym_size.h
/// kiln::SymSize: a tensor size that may be symbolic inside a compiled function.
///
/// Outside kiln::compile, and for static dims, a SymSize is just an integer. Inside a trace, a
/// dim that is dynamic (see CompileOptions::dynamic and mark_dynamic) is a symbol such as `s0`;
/// arithmetic on SymSizes builds expressions (`s0 * 8`, `s0 // 2`) that stay symbolic when
/// passed back to shape arguments (reshape, expand, full, arange). Turning a symbolic SymSize
/// into a C++ integer (the implicit conversion, value(), comparisons, indexing a std::vector)
/// specialises it: the trace continues with the observed value and records a guard, so the
/// compiled code is reused only for calls with that value. Specialising a dim given to
/// mark_dynamic is an error naming the line.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "kiln/dtype.h"

namespace kiln {

namespace detail {
struct SymSizeNode;  // the symbolic expression and the trace it belongs to (runtime)
}

class SymSize {
 public:
  SymSize() = default;
  template <std::integral T>
  SymSize(T value) : hint_(static_cast<int64_t>(value)) {}  // NOLINT: implicit
  SymSize(std::shared_ptr<const detail::SymSizeNode> node, int64_t hint)
      : hint_(hint), node_(std::move(node)) {}

  /// The integer value; specialises a symbolic size (records a guard) inside a trace. The
  /// guard names the line where the size was taken (Tensor::size).
  operator int64_t() const { return node_ ? specialize(nullptr) : hint_; }  // NOLINT: implicit
  /// As the conversion, naming `loc` as the line that required the value.
  int64_t value(std::source_location loc = std::source_location::current()) const {
    return node_ ? specialize(&loc) : hint_;
  }
  /// The value seen while tracing, without specialising (for messages and heuristics).
  int64_t hint() const { return hint_; }
  bool is_symbolic() const { return node_ != nullptr; }
  /// "s0*8 + 1" for a symbolic size, the number otherwise.
  std::string str() const;
  const std::shared_ptr<const detail::SymSizeNode>& node() const { return node_; }

 private:
  int64_t specialize(const std::source_location* loc) const;
  int64_t hint_ = 0;
  std::shared_ptr<const detail::SymSizeNode> node_;
};

/// Symbolic arithmetic. `/` and `%` are floor division and modulo (Python's, as on sizes).
SymSize operator+(const SymSize& a, const SymSize& b);
SymSize operator-(const SymSize& a, const SymSize& b);
SymSize operator*(const SymSize& a, const SymSize& b);
SymSize operator/(const SymSize& a, const SymSize& b);
SymSize operator%(const SymSize& a, const SymSize& b);
SymSize sym_min(const SymSize& a, const SymSize& b);
SymSize sym_max(const SymSize& a, const SymSize& b);

/// A relation between two sizes.
enum class SizeRelation : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
/// Whether `a rel b` holds. Inside a trace, a relation on symbolic sizes that their ranges do
/// not decide is decided by the values seen and recorded as a guard (the compiled code is reused
/// for calls where it holds the same way); one the ranges decide records nothing (`s0 == -1` is
/// false for every size). Unlike value(), it never fixes a size to one value.
bool size_relation_holds(const SymSize& a, SizeRelation rel, const SymSize& b,
                         std::source_location loc = std::source_location::current());
#define KILN_SYMSIZE_MIXED(op)                 \
  template <std::integral T>                   \
  SymSize operator op(const SymSize& a, T b) { \
    return a op SymSize(b);                    \
  }                                            \
  template <std::integral T>                   \
  SymSize operator op(T a, const SymSize& b) { \
    return SymSize(a) op b;                    \
  }
KILN_SYMSIZE_MIXED(+)
KILN_SYMSIZE_MIXED(-)
KILN_SYMSIZE_MIXED(*)
KILN_SYMSIZE_MIXED(/)
KILN_SYMSIZE_MIXED(%)
#undef KILN_SYMSIZE_MIXED

/// A shape argument whose dims may be symbolic: written `{b, s, 8, -1}` or from a Shape.
class Sizes {
 public:
  Sizes() = default;
  Sizes(std::initializer_list<SymSize> dims) : dims_(dims) {}       // NOLINT: implicit
  Sizes(std::vector<SymSize> dims) : dims_(std::move(dims)) {}      // NOLINT: implicit
  Sizes(const Shape& shape) : dims_(shape.begin(), shape.end()) {}  // NOLINT: implicit

  size_t size() const { return dims_.size(); }
  bool empty() const { return dims_.empty(); }
  const SymSize& operator[](size_t i) const { return dims_[i]; }
  SymSize& operator[](size_t i) { return dims_[i]; }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }
  void insert(size_t at, SymSize d) { dims_.insert(dims_.begin() + static_cast<ptrdiff_t>(at), d); }
  void erase(size_t at) { dims_.erase(dims_.begin() + static_cast<ptrdiff_t>(at)); }
  void push_back(SymSize d) { dims_.push_back(std::move(d)); }
  bool is_symbolic() const;
  /// The hints (values seen while tracing), without specialising.
  Shape hints() const;
  /// The integer shape; specialises every symbolic dim.
  Shape values(std::source_location loc = std::source_location::current()) const;
  std::string str() const;  // "[s0, 8, 64]"

 private:
  std::vector<SymSize> dims_;
};

}  // namespace kiln
