/// \file symbolic.h
/// Symbolic sizes: SymExpr (canonical integer expressions over size symbols), SymInt (a plain
/// int64 or a SymExpr) and ShapeEnv (the symbols of one trace, the facts known about them, and
/// the guards that decisions on them recorded). Modelled on TorchDynamo's ShapeEnv / SymInt,
/// without sympy: the canonical form is written here.
///
/// Canonical form (what makes structurally equal expressions mean equal values):
///   - a sum is `constant + sum(coef * monomial)`, monomials sorted, like terms combined, no zero
///     coefficients; products of sums are fully expanded (so constants distribute over sums);
///   - a monomial is a sorted product of atoms with exponents (`s0**2*s1`); atoms are symbols and
///     the opaque nodes floordiv, mod, min, max;
///   - floordiv/mod by a constant pull out every multiple of the divisor, fold nested divisions
///     ((a//b)//c = a//(b*c)), and divide out a common factor; min/max are n-ary, flattened,
///     sorted, deduplicated, with constants folded and provably dominated operands dropped;
///   - floordiv/mod follow Python: floordiv rounds toward -inf, mod takes the divisor's sign.
/// Facts (symbol ranges, known divisors) enter only through a SymFacts; without one an expression
/// is simplified only by identities that hold for every integer value of its symbols.
///
/// Ownership and threads: SymExpr and SymInt are immutable values sharing reference-counted
/// nodes; copies are cheap and they may be used from any thread. ShapeEnv is a plain mutable
/// object owned by one trace and is not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

/// Node kinds, in the order canonical sorting uses.
enum class SymKind : uint8_t { kConst, kSymbol, kMul, kFloorDiv, kMod, kMin, kMax, kAdd };

/// Closed interval; the int64 extremes stand for unbounded ends.
struct SymRange {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;
  bool contains(int64_t v) const { return lo <= v && v <= hi; }
  bool operator==(const SymRange&) const = default;
};

/// What simplification may assume about symbols. ShapeEnv implements it.
class SymFacts {
 public:
  virtual ~SymFacts() = default;
  virtual SymRange symbol_range(int symbol) const = 0;
  /// A positive number known to divide the symbol's value (1 when nothing is known).
  virtual int64_t symbol_divisor(int symbol) const = 0;
};

struct SymNode;

/// An immutable integer expression in canonical form. Build it only through the factories and
/// operators below, which canonicalise; equal canonical forms compare equal (operator==).
/// Nodes are not hash-consed: equality is structural, with a hash cached in every node so that
/// unequal expressions usually differ at the first comparison.
class SymExpr {
 public:
  SymExpr();  ///< The constant 0.
  static SymExpr constant(int64_t value);
  static SymExpr symbol(int id);  ///< Printed as "s<id>".

  SymKind kind() const;
  bool is_constant() const { return kind() == SymKind::kConst; }
  bool is_symbol() const { return kind() == SymKind::kSymbol; }
  int64_t constant_value() const;  ///< Asserts is_constant().
  int symbol_id() const;           ///< Asserts is_symbol().
  /// Children. kAdd: monomials (coefficients in ints(), constant term in add_constant());
  /// kMul: bases (exponents in ints()); kFloorDiv/kMod: {numerator, divisor}; kMin/kMax: operands.
  std::span<const SymExpr> args() const;
  std::span<const int64_t> ints() const;
  int64_t add_constant() const;  ///< kAdd: the constant term.
  size_t hash() const;

  /// Readable and deterministic: "s0*s1 + 2", "(s0//4)", "(s1 % 8)", "min(s0, s1)".
  std::string str() const;
  /// Value for `values[symbol id]`. Precondition: every free symbol has a value and no divisor
  /// evaluates to 0. Arithmetic wraps modulo 2^64 (sizes never come near).
  int64_t evaluate(std::span<const int64_t> values) const;
  std::vector<int> free_symbols() const;  ///< Sorted, unique.

  friend bool operator==(const SymExpr& a, const SymExpr& b);
  /// Total order used for canonical sorting (structural; deterministic across runs).
  friend int compare(const SymExpr& a, const SymExpr& b);

 private:
  friend struct SymBuild;
  explicit SymExpr(std::shared_ptr<const SymNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const SymNode> node_;
};

SymExpr operator+(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a);
SymExpr operator*(const SymExpr& a, const SymExpr& b);
/// Python floordiv/mod/min/max. `facts`, if given, lets ranges and divisors simplify further.
/// A constant 0 divisor is a programming error (asserted).
SymExpr sym_floordiv(const SymExpr& a, const SymExpr& b, const SymFacts* facts = nullptr);
SymExpr sym_mod(const SymExpr& a, const SymExpr& b, const SymFacts* facts = nullptr);
SymExpr sym_min(const SymExpr& a, const SymExpr& b, const SymFacts* facts = nullptr);
SymExpr sym_max(const SymExpr& a, const SymExpr& b, const SymFacts* facts = nullptr);
/// a / b when the monomial b divides every term of a and a has no constant ((16*s0)/s0 = 16):
/// the quotient wherever b != 0; nullopt otherwise. sym_floordiv applies it only when b is
/// provably nonzero; a caller for which b = 0 is an error anyway (a reshape's -1) may use it.
std::optional<SymExpr> sym_exact_quotient(const SymExpr& a, const SymExpr& b);
/// Interval arithmetic over `facts` (all symbols unbounded when null).
SymRange sym_bound(const SymExpr& e, const SymFacts* facts);
/// Rebuilds `e` in canonical form with every symbol s replaced by `replace(s)` when it has a value.
SymExpr sym_substitute(const SymExpr& e,
                       const std::function<std::optional<SymExpr>(int symbol)>& replace,
                       const SymFacts* facts = nullptr);
/// As sym_substitute, and then every rebuilt subexpression `x` (bottom-up, in canonical form)
/// for which `replace_node(x)` has a value is replaced by it.
SymExpr sym_rewrite(const SymExpr& e,
                    const std::function<std::optional<SymExpr>(int symbol)>& replace,
                    const std::function<std::optional<SymExpr>(const SymExpr&)>& replace_node,
                    const SymFacts* facts = nullptr);
/// GLSL `uint` expression: literals get a `u` suffix, floordiv/mod become `/` and `%`, min/max
/// become min()/max(). Exact only when every subexpression is non-negative (true of sizes).
std::string to_glsl(const SymExpr& e, const std::function<std::string(int symbol)>& name_of);

int64_t python_floordiv(int64_t a, int64_t b);  ///< Rounds toward -inf. b != 0.
int64_t python_mod(int64_t a, int64_t b);       ///< Result has b's sign. b != 0.

/// A size: a plain int64 (no allocation) or a symbolic SymExpr. A SymExpr that folds to a
/// constant is stored as a plain int, so is_constant() is exact for canonical forms.
class SymInt {
 public:
  SymInt(int64_t value = 0) : value_(value) {}  // NOLINT(google-explicit-constructor)
  explicit SymInt(const SymExpr& e);

  bool is_constant() const { return !expr_.has_value(); }
  int64_t constant_value() const;  ///< Asserts is_constant().
  SymExpr expr() const;            ///< The expression (a constant node for plain ints).
  std::string str() const;
  int64_t evaluate(std::span<const int64_t> values) const;
  std::vector<int> free_symbols() const;
  /// Structural equality of canonical forms (not a guard; see ShapeEnv for decisions).
  friend bool operator==(const SymInt& a, const SymInt& b);

 private:
  int64_t value_ = 0;
  std::optional<SymExpr> expr_;
};

SymInt operator+(const SymInt& a, const SymInt& b);
SymInt operator-(const SymInt& a, const SymInt& b);
SymInt operator-(const SymInt& a);
SymInt operator*(const SymInt& a, const SymInt& b);
SymInt sym_floordiv(const SymInt& a, const SymInt& b);
SymInt sym_mod(const SymInt& a, const SymInt& b);
SymInt sym_min(const SymInt& a, const SymInt& b);
SymInt sym_max(const SymInt& a, const SymInt& b);
std::optional<SymInt> sym_exact_quotient(const SymInt& a, const SymInt& b);

/// A comparison between two sizes, as decided by ShapeEnv.
enum class RelOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
const char* rel_op_str(RelOp op);  ///< "==", "!=", "<", ...
RelOp negate(RelOp op);            ///< The relation that holds when `op` does not.
bool rel_holds(RelOp op, int64_t lhs, int64_t rhs);

struct SymRel {
  RelOp op = RelOp::kEq;
  SymInt lhs, rhs;
  std::string str() const;  ///< "s0 < 128"
};
inline SymRel sym_eq(SymInt a, SymInt b) {
  return {RelOp::kEq, std::move(a), std::move(b)};
}
inline SymRel sym_ne(SymInt a, SymInt b) {
  return {RelOp::kNe, std::move(a), std::move(b)};
}
inline SymRel sym_lt(SymInt a, SymInt b) {
  return {RelOp::kLt, std::move(a), std::move(b)};
}
inline SymRel sym_le(SymInt a, SymInt b) {
  return {RelOp::kLe, std::move(a), std::move(b)};
}
inline SymRel sym_gt(SymInt a, SymInt b) {
  return {RelOp::kGt, std::move(a), std::move(b)};
}
inline SymRel sym_ge(SymInt a, SymInt b) {
  return {RelOp::kGe, std::move(a), std::move(b)};
}

enum class ShapeGuardKind : uint8_t {
  kEqualsConstant,  ///< lhs == rhs, rhs a constant
  kRange,           ///< lo <= lhs <= hi
  kRelation,        ///< lhs op rhs
  kDivisible,       ///< lhs % rhs == 0, rhs a positive constant
};
const char* shape_guard_kind_name(ShapeGuardKind kind);

/// One guard: a condition on symbol values that must hold for a trace to be reused, with the
/// decision or source that required it.
struct ShapeGuard {
  ShapeGuardKind kind = ShapeGuardKind::kEqualsConstant;
  SymExpr lhs;
  RelOp op = RelOp::kEq;   ///< kRelation only.
  SymExpr rhs;             ///< kEqualsConstant / kRelation / kDivisible.
  int64_t lo = 0, hi = 0;  ///< kRange only (SymRange extremes mean unbounded).
  std::string provenance;
  std::string to_string() const;  ///< "s0 == 64  # reshape at model.cpp:12"
};

/// Guards compiled into one flat postfix program (see ShapeEnv::freeze).
class GuardProgram {
 public:
  static constexpr int kMaxStack = 64;
  /// Appends the check for `guard`, reported as `index` when it fails. Fails (internal) if an
  /// expression needs more than kMaxStack stack slots.
  Status add(const ShapeGuard& guard, int index);
  /// Index of the first failing guard, or -1. Allocates nothing. A zero divisor fails its guard.
  int run(std::span<const int64_t> values) const;
  size_t size() const { return code_.size(); }

  struct Instr {
    uint8_t op = 0;
    uint8_t rel = 0;
    int32_t guard = 0;
    int64_t a = 0, b = 0;
  };

 private:
  Status emit(const SymExpr& e, int guard, int depth);
  std::vector<Instr> code_;
};

struct SymbolInfo {
  int64_t hint = 0;  ///< The value observed when the symbol was created.
  SymRange range;
  int64_t divisor = 1;       ///< A positive number known to divide the value.
  std::string source;        ///< "input 0 dim 1"
  std::string range_reason;  ///< Why the range was narrowed ("" if it was not).
  bool dynamic = false;      ///< mark_dynamic: specialising it is an error.
  /// A data-dependent size (masked_select's length): no input dim holds it, so no guard may
  /// mention it; its value is known only once the op that defines it has run.
  bool unbacked = false;
};

/// The symbols of one trace and what is known and assumed about them.
///
/// Every symbol is a binding slot: check_guards takes one value per symbol id, read by the caller
/// from the symbol's source. Facts are recorded as substitutions (s1 -> s0, s2 -> 64), ranges and
/// divisors; every decision that narrows the set of accepted inputs also records a guard with its
/// provenance. Not thread-safe; owned by one trace.
class ShapeEnv final : public SymFacts {
 public:
  struct Options {
    bool duck_sizing = true;          ///< equal sizes share a symbol
    bool specialize_zero_one = true;  ///< sizes 0 and 1 are constants
  };
  ShapeEnv() = default;
  explicit ShapeEnv(Options options) : options_(options) {}

  /// A new free symbol with hint `hint` and range [min, max] (the hint must lie inside).
  int create_symbol(int64_t hint, std::string source, int64_t min = 2,
                    int64_t max = SymRange::kPosInf);
  /// An unbacked symbol: a size that only running the graph reveals (the length of a
  /// masked_select). Range [0, inf); `hint` is a stand-in for decisions that need none (no
  /// guard is ever recorded on it: a decision that would need one is an error naming
  /// `source`). set_hint() records the value once a run has revealed it.
  int create_unbacked_symbol(int64_t hint, std::string source);
  void set_hint(int symbol, int64_t value);
  /// The unbacked symbols, sorted.
  std::vector<int> unbacked_symbols() const;
  /// The size for a value read from `source`. Always allocates a binding slot (returned in
  /// `out_symbol`): 0 and 1 become constants guarded `slot == v`; with duck sizing a value seen
  /// before returns the earlier symbol, guarded `slot == earlier`.
  SymInt symbol_for_value(int64_t value, std::string source, int* out_symbol = nullptr);
  SymExpr symbol(int id) const { return SymExpr::symbol(id); }
  int num_symbols() const { return static_cast<int>(symbols_.size()); }
  const SymbolInfo& info(int id) const { return symbols_.at(static_cast<size_t>(id)); }
  /// Marks the symbol (its canonical symbols) as one that must stay dynamic; an error if it is
  /// already a constant.
  Status mark_dynamic(int symbol);

  /// Records `a == b` (hints must agree); solves for a symbol when one appears linearly with
  /// coefficient +-1, so later expressions canonicalise to the other side. An expression equal
  /// to a constant that no symbol can be solved for (x[3::3]'s length == 1) is remembered as
  /// it is: simplify() replaces it, wherever it appears, by the constant.
  Status add_equality(const SymInt& a, const SymInt& b, std::string provenance);
  /// Records `e % d == 0` (d > 0; the hint must agree).
  Status add_divisibility(const SymInt& e, int64_t d, std::string provenance);
  /// Narrows a symbol's range to [min, max] (the hint must stay inside).
  Status constrain_range(int symbol, int64_t min, int64_t max, std::string provenance);

  SymExpr simplify(const SymExpr& e) const;  ///< Substitutions, then range/divisor rules.
  SymInt simplify(const SymInt& v) const;
  int64_t hint(const SymInt& v) const;  ///< Value at the hints.
  SymRange bound(const SymInt& v) const;

  bool statically_known_true(const SymRel& rel) const;  ///< True for every value in range.
  bool known_eq(const SymInt& a, const SymInt& b) const {
    return statically_known_true(sym_eq(a, b));
  }
  bool known_ne(const SymInt& a, const SymInt& b) const {
    return statically_known_true(sym_ne(a, b));
  }
  bool known_lt(const SymInt& a, const SymInt& b) const {
    return statically_known_true(sym_lt(a, b));
  }
  bool known_le(const SymInt& a, const SymInt& b) const {
    return statically_known_true(sym_le(a, b));
  }
  bool known_divisible(const SymInt& e, int64_t d) const;

  /// A plain integer for `v`, taken from the hints; records `v == value` unless already known.
  /// An error (naming `provenance`) if that would specialise a dynamic symbol.
  Expected<int64_t> evaluate_guarding(const SymInt& v, std::string provenance);
  /// Decides `rel` from the hints and records the outcome as a guard unless statically known.
  /// Equalities become substitutions; `symbol op constant` narrows the range.
  Expected<bool> evaluate_guarding(const SymRel& rel, std::string provenance);
  Expected<int64_t> specialize(int symbol, std::string reason);

  /// The guards, in check order: a range guard per free symbol, then the recorded guards.
  std::vector<ShapeGuard> guards() const;
  /// Compiles guards() into a GuardProgram: a flat vector of postfix instructions (push constant,
  /// push symbol, arithmetic, check) evaluated with a fixed-size stack, so check_guards never
  /// allocates. Call again after recording more guards.
  Status freeze();
  bool frozen() const { return frozen_; }
  /// Index (into guards()) of the first guard `values` fail, or -1. Requires freeze() after the
  /// last recorded fact; `values` has one entry per symbol. Allocation-free.
  int check_guards(std::span<const int64_t> values) const;

  /// Called with every guard as it is recorded (KILN_LOGS=dynamic).
  void set_on_guard(std::function<void(const ShapeGuard&)> fn) { on_guard_ = std::move(fn); }

  // SymFacts
  SymRange symbol_range(int symbol) const override;
  int64_t symbol_divisor(int symbol) const override;

 private:
  Status record_equal(const SymExpr& lhs, const SymExpr& rhs, const std::string& provenance);
  Status check_specialisable(const SymExpr& e, int64_t value, const std::string& why) const;
  /// An error when `e` mentions an unbacked symbol: `what` would need a guard on it.
  Status check_backed(const SymExpr& e, const std::string& what, const std::string& why) const;
  void record(ShapeGuard guard);

  Options options_;
  std::vector<SymbolInfo> symbols_;
  std::vector<std::optional<SymExpr>> replacements_;       // per symbol
  std::vector<std::pair<SymExpr, int64_t>> known_values_;  // expression == constant
  std::vector<std::pair<int64_t, int>> duck_;              // hint -> first symbol
  std::vector<int64_t> hints_;
  std::vector<ShapeGuard> recorded_;
  GuardProgram program_;
  bool frozen_ = false;
  std::function<void(const ShapeGuard&)> on_guard_;
};

}  // namespace kiln
