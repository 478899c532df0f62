// SymExpr over values: evaluation, interval bounds, substitution, printing (text and GLSL), and
// the SymInt / SymRel value types.
#include <algorithm>
#include <cassert>
#include <set>

#include "graph/symbolic.h"

namespace kiln {
namespace {

constexpr int64_t kNegInf = SymRange::kNegInf;
constexpr int64_t kPosInf = SymRange::kPosInf;

int64_t wrap(uint64_t v) {
  return static_cast<int64_t>(v);
}

// Extended arithmetic where the int64 extremes are infinities; overflow saturates.
int64_t ext_add(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return kNegInf;
  if (a == kPosInf || b == kPosInf) return kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}
int64_t ext_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  const bool neg = (a < 0) != (b < 0);
  int64_t r;
  if (a == kNegInf || a == kPosInf || b == kNegInf || b == kPosInf ||
      __builtin_mul_overflow(a, b, &r)) {
    return neg ? kNegInf : kPosInf;
  }
  return r;
}
SymRange range_mul(SymRange a, SymRange b) {
  int64_t p[] = {ext_mul(a.lo, b.lo), ext_mul(a.lo, b.hi), ext_mul(a.hi, b.lo),
                 ext_mul(a.hi, b.hi)};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}
int64_t ext_floordiv(int64_t a, int64_t c) {  // c > 0
  return a == kNegInf || a == kPosInf ? a : python_floordiv(a, c);
}

int64_t pow_wrap(int64_t base, int64_t exp) {
  uint64_t r = 1;
  for (int64_t i = 0; i < exp; ++i) r *= static_cast<uint64_t>(base);
  return wrap(r);
}

std::string paren(const SymExpr& e, bool wrap_mul) {
  bool need = e.kind() == SymKind::kAdd || (wrap_mul && e.kind() == SymKind::kMul) ||
              (e.is_constant() && e.constant_value() < 0);
  return need ? "(" + e.str() + ")" : e.str();
}

}  // namespace

int64_t python_floordiv(int64_t a, int64_t b) {
  assert(b != 0);
  if (b == -1) return wrap(0 - static_cast<uint64_t>(a));  // INT64_MIN / -1 wraps
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t python_mod(int64_t a, int64_t b) {
  assert(b != 0);
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

SymRange sym_bound(const SymExpr& e, const SymFacts* facts) {
  switch (e.kind()) {
    case SymKind::kConst:
      return {e.constant_value(), e.constant_value()};
    case SymKind::kSymbol:
      return facts ? facts->symbol_range(e.symbol_id()) : SymRange{};
    case SymKind::kAdd: {
      SymRange r{e.add_constant(), e.add_constant()};
      for (size_t i = 0; i < e.args().size(); ++i) {
        SymRange t = range_mul(sym_bound(e.args()[i], facts), {e.ints()[i], e.ints()[i]});
        r = {ext_add(r.lo, t.lo), ext_add(r.hi, t.hi)};
      }
      return r;
    }
    case SymKind::kMul: {
      SymRange r{1, 1};
      for (size_t i = 0; i < e.args().size(); ++i) {
        SymRange b = sym_bound(e.args()[i], facts), pw{1, 1};
        for (int64_t k = 0; k < e.ints()[i]; ++k) pw = range_mul(pw, b);
        if (e.ints()[i] % 2 == 0) pw.lo = std::max<int64_t>(pw.lo, 0);  // even power
        r = range_mul(r, pw);
      }
      return r;
    }
    case SymKind::kFloorDiv: {
      SymRange a = sym_bound(e.args()[0], facts), b = sym_bound(e.args()[1], facts);
      if (b.lo >= 1 && b.lo == b.hi) return {ext_floordiv(a.lo, b.lo), ext_floordiv(a.hi, b.lo)};
      if (b.lo >= 1 && a.lo >= 0) return {ext_floordiv(a.lo, b.hi), ext_floordiv(a.hi, b.lo)};
      return {};
    }
    case SymKind::kMod: {
      SymRange a = sym_bound(e.args()[0], facts), b = sym_bound(e.args()[1], facts);
      if (b.lo < 1) return {};
      int64_t hi = b.hi == kPosInf ? kPosInf : b.hi - 1;
      return {0, a.lo >= 0 ? std::min(hi, a.hi) : hi};
    }
    case SymKind::kMin:
    case SymKind::kMax: {
      const bool is_min = e.kind() == SymKind::kMin;
      SymRange r = sym_bound(e.args()[0], facts);
      for (const SymExpr& a : e.args().subspan(1)) {
        SymRange b = sym_bound(a, facts);
        r = is_min ? SymRange{std::min(r.lo, b.lo), std::min(r.hi, b.hi)}
                   : SymRange{std::max(r.lo, b.lo), std::max(r.hi, b.hi)};
      }
      return r;
    }
  }
  return {};
}

SymExpr sym_substitute(const SymExpr& e,
                       const std::function<std::optional<SymExpr>(int symbol)>& replace,
                       const SymFacts* facts) {
  return sym_rewrite(e, replace, nullptr, facts);
}

SymExpr sym_rewrite(const SymExpr& e,
                    const std::function<std::optional<SymExpr>(int symbol)>& replace,
                    const std::function<std::optional<SymExpr>(const SymExpr&)>& replace_node,
                    const SymFacts* facts) {
  auto sub = [&](const SymExpr& x) { return sym_rewrite(x, replace, replace_node, facts); };
  SymExpr r;
  switch (e.kind()) {
    case SymKind::kConst:
      return e;
    case SymKind::kSymbol:
      r = replace(e.symbol_id()).value_or(e);
      break;
    case SymKind::kAdd: {
      r = SymExpr::constant(e.add_constant());
      for (size_t i = 0; i < e.args().size(); ++i) {
        r = r + sub(e.args()[i]) * SymExpr::constant(e.ints()[i]);
      }
      break;
    }
    case SymKind::kMul: {
      r = SymExpr::constant(1);
      for (size_t i = 0; i < e.args().size(); ++i) {
        SymExpr b = sub(e.args()[i]);
        for (int64_t k = 0; k < e.ints()[i]; ++k) r = r * b;
      }
      break;
    }
    case SymKind::kFloorDiv:
      r = sym_floordiv(sub(e.args()[0]), sub(e.args()[1]), facts);
      break;
    case SymKind::kMod:
      r = sym_mod(sub(e.args()[0]), sub(e.args()[1]), facts);
      break;
    case SymKind::kMin:
    case SymKind::kMax: {
      r = sub(e.args()[0]);
      for (const SymExpr& a : e.args().subspan(1)) {
        r = e.kind() == SymKind::kMin ? sym_min(r, sub(a), facts) : sym_max(r, sub(a), facts);
      }
      break;
    }
  }
  if (replace_node && !r.is_constant()) {
    if (std::optional<SymExpr> x = replace_node(r)) return *x;
  }
  return r;
}

int64_t SymExpr::evaluate(std::span<const int64_t> values) const {
  switch (kind()) {
    case SymKind::kConst:
      return constant_value();
    case SymKind::kSymbol:
      assert(static_cast<size_t>(symbol_id()) < values.size());
      return values[static_cast<size_t>(symbol_id())];
    case SymKind::kAdd: {
      uint64_t r = static_cast<uint64_t>(add_constant());
      for (size_t i = 0; i < args().size(); ++i) {
        r += static_cast<uint64_t>(args()[i].evaluate(values)) * static_cast<uint64_t>(ints()[i]);
      }
      return wrap(r);
    }
    case SymKind::kMul: {
      uint64_t r = 1;
      for (size_t i = 0; i < args().size(); ++i) {
        r *= static_cast<uint64_t>(pow_wrap(args()[i].evaluate(values), ints()[i]));
      }
      return wrap(r);
    }
    case SymKind::kFloorDiv:
      return python_floordiv(args()[0].evaluate(values), args()[1].evaluate(values));
    case SymKind::kMod:
      return python_mod(args()[0].evaluate(values), args()[1].evaluate(values));
    case SymKind::kMin:
    case SymKind::kMax: {
      int64_t r = args()[0].evaluate(values);
      for (const SymExpr& a : args().subspan(1)) {
        int64_t v = a.evaluate(values);
        r = kind() == SymKind::kMin ? std::min(r, v) : std::max(r, v);
      }
      return r;
    }
  }
  return 0;
}

std::vector<int> SymExpr::free_symbols() const {
  std::set<int> out;
  std::function<void(const SymExpr&)> walk = [&](const SymExpr& e) {
    if (e.is_symbol()) out.insert(e.symbol_id());
    for (const SymExpr& a : e.args()) walk(a);
  };
  walk(*this);
  return {out.begin(), out.end()};
}

std::string SymExpr::str() const {
  switch (kind()) {
    case SymKind::kConst:
      return std::to_string(constant_value());
    case SymKind::kSymbol:
      return "s" + std::to_string(symbol_id());
    case SymKind::kAdd: {
      std::string s;
      for (size_t i = 0; i < args().size(); ++i) {
        int64_t c = ints()[i];
        uint64_t mag = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
        s += i == 0 ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ");
        s += (mag == 1 ? "" : std::to_string(mag) + "*") + args()[i].str();
      }
      int64_t k = add_constant();
      if (k > 0) s += " + " + std::to_string(k);
      if (k < 0) s += " - " + std::to_string(0 - static_cast<uint64_t>(k));
      return s;
    }
    case SymKind::kMul: {
      std::string s;
      for (size_t i = 0; i < args().size(); ++i) {
        s += (i ? "*" : "") + args()[i].str();
        if (ints()[i] != 1) s += "**" + std::to_string(ints()[i]);
      }
      return s;
    }
    case SymKind::kFloorDiv:
      return "(" + paren(args()[0], false) + "//" + paren(args()[1], true) + ")";
    case SymKind::kMod:
      return "(" + paren(args()[0], true) + " % " + paren(args()[1], true) + ")";
    case SymKind::kMin:
    case SymKind::kMax: {
      std::string s = kind() == SymKind::kMin ? "min(" : "max(";
      for (size_t i = 0; i < args().size(); ++i) s += (i ? ", " : "") + args()[i].str();
      return s + ")";
    }
  }
  return "?";
}

std::string to_glsl(const SymExpr& e, const std::function<std::string(int symbol)>& name_of) {
  auto g = [&](const SymExpr& x) { return to_glsl(x, name_of); };
  auto lit = [](uint64_t v) { return std::to_string(v) + "u"; };
  switch (e.kind()) {
    case SymKind::kConst:
      return e.constant_value() >= 0 ? lit(static_cast<uint64_t>(e.constant_value()))
                                     : "uint(" + std::to_string(e.constant_value()) + ")";
    case SymKind::kSymbol:
      return name_of(e.symbol_id());
    case SymKind::kAdd: {  // positive terms first, so uint arithmetic never starts negative
      std::string pos, neg;
      for (size_t i = 0; i < e.args().size(); ++i) {
        int64_t c = e.ints()[i];
        uint64_t mag = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
        std::string t = g(e.args()[i]) + (mag == 1 ? "" : " * " + lit(mag));
        if (c > 0) pos += (pos.empty() ? "" : " + ") + t;
        if (c < 0) neg += " - " + t;
      }
      int64_t k = e.add_constant();
      if (k > 0) pos += (pos.empty() ? "" : " + ") + lit(static_cast<uint64_t>(k));
      if (k < 0) neg += " - " + lit(0 - static_cast<uint64_t>(k));
      return "(" + (pos.empty() ? "0u" : pos) + neg + ")";
    }
    case SymKind::kMul: {
      std::string s;
      for (size_t i = 0; i < e.args().size(); ++i) {
        for (int64_t k = 0; k < e.ints()[i]; ++k) s += (s.empty() ? "" : " * ") + g(e.args()[i]);
      }
      return "(" + s + ")";
    }
    case SymKind::kFloorDiv:
      return "(" + g(e.args()[0]) + " / " + g(e.args()[1]) + ")";
    case SymKind::kMod:
      return "(" + g(e.args()[0]) + " % " + g(e.args()[1]) + ")";
    case SymKind::kMin:
    case SymKind::kMax: {
      const char* fn = e.kind() == SymKind::kMin ? "min(" : "max(";
      std::string s = g(e.args().back());
      for (size_t i = e.args().size() - 1; i-- > 0;) s = fn + g(e.args()[i]) + ", " + s + ")";
      return s;
    }
  }
  return "0u";
}

// ---- SymInt ----------------------------------------------------------------------------------

SymInt::SymInt(const SymExpr& e) {
  if (e.is_constant()) {
    value_ = e.constant_value();
  } else {
    expr_ = e;
  }
}
int64_t SymInt::constant_value() const {
  assert(is_constant());
  return value_;
}
SymExpr SymInt::expr() const {
  return expr_ ? *expr_ : SymExpr::constant(value_);
}
std::string SymInt::str() const {
  return expr_ ? expr_->str() : std::to_string(value_);
}
int64_t SymInt::evaluate(std::span<const int64_t> values) const {
  return expr_ ? expr_->evaluate(values) : value_;
}
std::vector<int> SymInt::free_symbols() const {
  return expr_ ? expr_->free_symbols() : std::vector<int>{};
}
bool operator==(const SymInt& a, const SymInt& b) {
  if (a.is_constant() || b.is_constant()) {
    return a.is_constant() && b.is_constant() && a.value_ == b.value_;
  }
  return *a.expr_ == *b.expr_;
}

SymInt operator+(const SymInt& a, const SymInt& b) {
  if (a.is_constant() && b.is_constant()) {
    return wrap(static_cast<uint64_t>(a.constant_value()) +
                static_cast<uint64_t>(b.constant_value()));
  }
  return SymInt(a.expr() + b.expr());
}
SymInt operator-(const SymInt& a) {
  return a.is_constant() ? wrap(0 - static_cast<uint64_t>(a.constant_value())) : SymInt(-a.expr());
}
SymInt operator-(const SymInt& a, const SymInt& b) {
  return a + (-b);
}
SymInt operator*(const SymInt& a, const SymInt& b) {
  if (a.is_constant() && b.is_constant()) {
    return wrap(static_cast<uint64_t>(a.constant_value()) *
                static_cast<uint64_t>(b.constant_value()));
  }
  return SymInt(a.expr() * b.expr());
}
SymInt sym_floordiv(const SymInt& a, const SymInt& b) {
  if (a.is_constant() && b.is_constant()) {
    return python_floordiv(a.constant_value(), b.constant_value());
  }
  return SymInt(sym_floordiv(a.expr(), b.expr()));
}
std::optional<SymInt> sym_exact_quotient(const SymInt& a, const SymInt& b) {
  if (b.is_constant()) return std::nullopt;
  if (std::optional<SymExpr> q = sym_exact_quotient(a.expr(), b.expr())) return SymInt(*q);
  return std::nullopt;
}
SymInt sym_mod(const SymInt& a, const SymInt& b) {
  if (a.is_constant() && b.is_constant()) return python_mod(a.constant_value(), b.constant_value());
  return SymInt(sym_mod(a.expr(), b.expr()));
}
SymInt sym_min(const SymInt& a, const SymInt& b) {
  if (a.is_constant() && b.is_constant()) return std::min(a.constant_value(), b.constant_value());
  return SymInt(sym_min(a.expr(), b.expr()));
}
SymInt sym_max(const SymInt& a, const SymInt& b) {
  if (a.is_constant() && b.is_constant()) return std::max(a.constant_value(), b.constant_value());
  return SymInt(sym_max(a.expr(), b.expr()));
}

}  // namespace kiln
