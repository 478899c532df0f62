// SymExpr nodes and the canonicalising arithmetic: sums, products, floordiv, mod, min, max.
#include <algorithm>
#include <cassert>
#include <numeric>

#include "graph/symbolic.h"

namespace kiln {

struct SymNode {
  SymKind kind = SymKind::kConst;
  int64_t value = 0;  // kConst: the value; kSymbol: the id; kAdd: the constant term
  std::vector<SymExpr> args;
  std::vector<int64_t> ints;  // kAdd: coefficients; kMul: exponents
  size_t hash = 0;
};

// The only place nodes are made. Callers pass canonical operands.
struct SymBuild {
  static SymExpr make(SymKind kind, int64_t value, std::vector<SymExpr> args = {},
                      std::vector<int64_t> ints = {}) {
    auto n = std::make_shared<SymNode>();
    size_t h = static_cast<size_t>(kind) * 0x9e3779b97f4a7c15ull ^ static_cast<size_t>(value);
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (const SymExpr& a : args) mix(a.hash());
    for (int64_t i : ints) mix(static_cast<size_t>(i));
    *n = SymNode{kind, value, std::move(args), std::move(ints), h};
    return SymExpr(std::move(n));
  }
  static const SymNode& node(const SymExpr& e) { return *e.node_; }
};

namespace {

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// ---- polynomials: constant + sum(coef * monomial) -------------------------------------------

struct Term {
  SymExpr mono;
  int64_t coef;
};
struct Poly {
  int64_t c = 0;
  std::vector<Term> terms;
};
using Factors = std::vector<std::pair<SymExpr, int64_t>>;  // base, exponent

Poly to_poly(const SymExpr& e) {
  Poly p;
  if (e.is_constant()) {
    p.c = e.constant_value();
  } else if (e.kind() == SymKind::kAdd) {
    p.c = e.add_constant();
    for (size_t i = 0; i < e.args().size(); ++i) p.terms.push_back({e.args()[i], e.ints()[i]});
  } else {
    p.terms.push_back({e, 1});
  }
  return p;
}

SymExpr from_poly(Poly p) {
  std::sort(p.terms.begin(), p.terms.end(),
            [](const Term& a, const Term& b) { return compare(a.mono, b.mono) < 0; });
  std::vector<SymExpr> monos;
  std::vector<int64_t> coefs;
  for (const Term& t : p.terms) {
    if (!monos.empty() && monos.back() == t.mono) {
      coefs.back() = wrap_add(coefs.back(), t.coef);
    } else {
      monos.push_back(t.mono);
      coefs.push_back(t.coef);
    }
    if (coefs.back() == 0) monos.pop_back(), coefs.pop_back();
  }
  if (monos.empty()) return SymExpr::constant(p.c);
  if (p.c == 0 && monos.size() == 1 && coefs[0] == 1) return monos[0];
  return SymBuild::make(SymKind::kAdd, p.c, std::move(monos), std::move(coefs));
}

Factors factors(const SymExpr& mono) {
  Factors f;
  if (mono.kind() == SymKind::kMul) {
    for (size_t i = 0; i < mono.args().size(); ++i) f.emplace_back(mono.args()[i], mono.ints()[i]);
  } else {
    f.emplace_back(mono, 1);
  }
  return f;
}

SymExpr from_factors(Factors f) {
  std::sort(f.begin(), f.end(),
            [](const auto& a, const auto& b) { return compare(a.first, b.first) < 0; });
  std::vector<SymExpr> bases;
  std::vector<int64_t> exps;
  for (auto& [base, e] : f) {
    if (!bases.empty() && bases.back() == base) {
      exps.back() += e;
    } else {
      bases.push_back(base);
      exps.push_back(e);
    }
  }
  if (bases.size() == 1 && exps[0] == 1) return bases[0];
  return SymBuild::make(SymKind::kMul, 0, std::move(bases), std::move(exps));
}

SymExpr scale(const SymExpr& e, int64_t k) {
  Poly p = to_poly(e);
  p.c = wrap_mul(p.c, k);
  for (Term& t : p.terms) t.coef = wrap_mul(t.coef, k);
  return from_poly(std::move(p));
}

// If every factor of `divisor` (a monomial) appears in `mono`, the quotient monomial.
std::optional<SymExpr> divide_mono(const SymExpr& mono, const SymExpr& divisor) {
  Factors f = factors(mono);
  for (const auto& [base, e] : factors(divisor)) {
    auto it = std::find_if(f.begin(), f.end(), [&](const auto& x) { return x.first == base; });
    if (it == f.end() || it->second < e) return std::nullopt;
    it->second -= e;
    if (it->second == 0) f.erase(it);
  }
  if (f.empty()) return SymExpr::constant(1);
  return from_factors(std::move(f));
}

// Known divisor of a monomial's value (product of its symbols' divisors), 1 if unknown.
int64_t mono_divisor(const SymExpr& mono, const SymFacts* facts) {
  if (!facts) return 1;
  int64_t d = 1;
  for (const auto& [base, e] : factors(mono)) {
    if (!base.is_symbol()) continue;
    for (int64_t i = 0; i < e; ++i) {
      if (__builtin_mul_overflow(d, facts->symbol_divisor(base.symbol_id()), &d)) return 1;
    }
  }
  return d;
}

bool provably_nonneg(const SymExpr& e, const SymFacts* facts) {
  return sym_bound(e, facts).lo >= 0;
}
// 0 <= a < b for every value in range.
bool provably_below(const SymExpr& a, const SymExpr& b, const SymFacts* facts) {
  return provably_nonneg(a, facts) && sym_bound(b - a, facts).lo >= 1;
}
bool provably_nonzero(const SymExpr& e, const SymFacts* facts) {
  SymRange r = sym_bound(e, facts);
  return r.lo > 0 || r.hi < 0;
}

// a = c*q + r with every coefficient of r in [0, c). Returns {q, r}.
std::pair<Poly, Poly> split_multiples(const SymExpr& a, int64_t c) {
  Poly p = to_poly(a), q, r;
  q.c = python_floordiv(p.c, c);
  r.c = python_mod(p.c, c);
  for (const Term& t : p.terms) {
    if (int64_t qc = python_floordiv(t.coef, c)) q.terms.push_back({t.mono, qc});
    if (int64_t rc = python_mod(t.coef, c)) r.terms.push_back({t.mono, rc});
  }
  return {q, r};
}

// gcd of all coefficients and the constant of `p`.
int64_t content(const Poly& p) {
  int64_t g = p.c;
  for (const Term& t : p.terms) g = std::gcd(g, t.coef);
  return g;
}

SymExpr floordiv_const(const SymExpr& a, int64_t c, const SymFacts* facts) {
  auto [q, r] = split_multiples(a, c);
  if (r.terms.empty()) return from_poly(std::move(q));  // r's constant is below c
  if (int64_t g = std::gcd(content(r), c); g > 1) {     // (g*y)//(g*k) = y//k
    r.c /= g;
    for (Term& t : r.terms) t.coef /= g;
    return from_poly(std::move(q)) + floordiv_const(from_poly(std::move(r)), c / g, facts);
  }
  SymExpr rest = from_poly(std::move(r)), out;
  if (provably_below(rest, SymExpr::constant(c), facts)) {
    out = SymExpr::constant(0);
  } else if (int64_t bc = 0; rest.kind() == SymKind::kFloorDiv && rest.args()[1].is_constant() &&
                             !__builtin_mul_overflow(rest.args()[1].constant_value(), c, &bc)) {
    out = sym_floordiv(rest.args()[0], SymExpr::constant(bc), facts);  // (x//b)//c = x//(b*c)
  } else {
    out = SymBuild::make(SymKind::kFloorDiv, 0, {rest, SymExpr::constant(c)});
  }
  return from_poly(std::move(q)) + out;
}

SymExpr mod_const(const SymExpr& a, int64_t c, const SymFacts* facts) {
  Poly r = split_multiples(a, c).second;
  std::erase_if(r.terms, [&](const Term& t) {  // known multiples of c vanish
    int64_t m;
    return !__builtin_mul_overflow(t.coef, mono_divisor(t.mono, facts), &m) && m % c == 0;
  });
  if (r.terms.empty()) return SymExpr::constant(r.c);
  if (int64_t g = std::gcd(content(r), c); g > 1) {  // (g*y) % (g*k) = g*(y % k)
    r.c /= g;
    for (Term& t : r.terms) t.coef /= g;
    return scale(mod_const(from_poly(std::move(r)), c / g, facts), g);
  }
  SymExpr rest = from_poly(std::move(r));
  if (provably_below(rest, SymExpr::constant(c), facts)) return rest;
  if (rest.kind() == SymKind::kMod && rest.args()[1].is_constant() &&
      rest.args()[1].constant_value() % c == 0) {
    return sym_mod(rest.args()[0], SymExpr::constant(c), facts);  // (x % (k*c)) % c = x % c
  }
  return SymBuild::make(SymKind::kMod, 0, {rest, SymExpr::constant(c)});
}

// Exact quotient of `a` by the monomial `b`, if b divides every term and the constant is 0.
std::optional<SymExpr> exact_quotient(const SymExpr& a, const SymExpr& b) {
  if (b.is_constant() || b.kind() == SymKind::kAdd) return std::nullopt;
  Poly p = to_poly(a), out;
  if (p.c != 0) return std::nullopt;
  for (const Term& t : p.terms) {
    std::optional<SymExpr> q = divide_mono(t.mono, b);
    if (!q) return std::nullopt;
    if (q->is_constant()) {
      out.c = wrap_add(out.c, t.coef);  // the monomial was b itself
    } else {
      out.terms.push_back({*q, t.coef});
    }
  }
  return from_poly(std::move(out));
}

SymExpr min_max(SymKind kind, const SymExpr& a, const SymExpr& b, const SymFacts* facts) {
  const bool is_min = kind == SymKind::kMin;
  std::vector<SymExpr> ops;
  std::optional<int64_t> k;
  for (const SymExpr& x : {a, b}) {
    std::span<const SymExpr> xs = x.kind() == kind ? x.args() : std::span<const SymExpr>(&x, 1);
    for (const SymExpr& y : xs) {
      if (!y.is_constant()) {
        ops.push_back(y);
      } else {
        int64_t v = y.constant_value();
        k = !k ? v : is_min ? std::min(*k, v) : std::max(*k, v);
      }
    }
  }
  if (k) ops.push_back(SymExpr::constant(*k));
  std::sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) { return compare(x, y) < 0; });
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  std::vector<bool> dropped(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {  // drop operands another kept one dominates
    for (size_t j = 0; j < ops.size() && !dropped[i]; ++j) {
      if (i == j || dropped[j]) continue;
      SymExpr d = is_min ? ops[i] - ops[j] : ops[j] - ops[i];
      dropped[i] = provably_nonneg(d, facts);
    }
  }
  std::vector<SymExpr> kept;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!dropped[i]) kept.push_back(ops[i]);
  }
  if (kept.size() == 1) return kept[0];
  return SymBuild::make(kind, 0, std::move(kept));
}

}  // namespace

// ---- SymExpr ---------------------------------------------------------------------------------

SymExpr::SymExpr() {
  static const SymExpr zero = SymBuild::make(SymKind::kConst, 0);
  node_ = zero.node_;
}
SymExpr SymExpr::constant(int64_t value) {
  return value == 0 ? SymExpr() : SymBuild::make(SymKind::kConst, value);
}
SymExpr SymExpr::symbol(int id) {
  return SymBuild::make(SymKind::kSymbol, id);
}
SymKind SymExpr::kind() const {
  return node_->kind;
}
int64_t SymExpr::constant_value() const {
  assert(is_constant());
  return node_->value;
}
int SymExpr::symbol_id() const {
  assert(is_symbol());
  return static_cast<int>(node_->value);
}
std::span<const SymExpr> SymExpr::args() const {
  return node_->args;
}
std::span<const int64_t> SymExpr::ints() const {
  return node_->ints;
}
int64_t SymExpr::add_constant() const {
  return kind() == SymKind::kAdd ? node_->value : 0;
}
size_t SymExpr::hash() const {
  return node_->hash;
}

bool operator==(const SymExpr& a, const SymExpr& b) {
  return a.node_ == b.node_ || (a.hash() == b.hash() && compare(a, b) == 0);
}

int compare(const SymExpr& a, const SymExpr& b) {
  if (a.node_ == b.node_) return 0;
  const SymNode &x = *a.node_, &y = *b.node_;
  if (x.kind != y.kind) return x.kind < y.kind ? -1 : 1;
  if (x.value != y.value) return x.value < y.value ? -1 : 1;
  for (size_t i = 0; i < std::min(x.args.size(), y.args.size()); ++i) {
    if (int c = compare(x.args[i], y.args[i])) return c;
  }
  if (x.args.size() != y.args.size()) return x.args.size() < y.args.size() ? -1 : 1;
  if (x.ints != y.ints) return x.ints < y.ints ? -1 : 1;
  return 0;
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    return SymExpr::constant(wrap_add(a.constant_value(), b.constant_value()));
  }
  Poly p = to_poly(a), q = to_poly(b);
  p.c = wrap_add(p.c, q.c);
  p.terms.insert(p.terms.end(), q.terms.begin(), q.terms.end());
  return from_poly(std::move(p));
}
SymExpr operator-(const SymExpr& a) {
  return scale(a, -1);
}
SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  return a + scale(b, -1);
}
SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant()) return scale(b, a.constant_value());
  if (b.is_constant()) return scale(a, b.constant_value());
  Poly p = to_poly(a), q = to_poly(b), out;
  out.c = wrap_mul(p.c, q.c);
  for (const Term& t : p.terms) out.terms.push_back({t.mono, wrap_mul(t.coef, q.c)});
  for (const Term& t : q.terms) out.terms.push_back({t.mono, wrap_mul(t.coef, p.c)});
  for (const Term& s : p.terms) {
    for (const Term& t : q.terms) {
      Factors f = factors(s.mono), g = factors(t.mono);
      f.insert(f.end(), g.begin(), g.end());
      out.terms.push_back({from_factors(std::move(f)), wrap_mul(s.coef, t.coef)});
    }
  }
  return from_poly(std::move(out));
}

SymExpr sym_floordiv(const SymExpr& a, const SymExpr& b, const SymFacts* facts) {
  if (b.is_constant()) {
    int64_t c = b.constant_value();
    assert(c != 0 && "floordiv by constant 0");
    if (c < 0) return sym_floordiv(-a, SymExpr::constant(-c), facts);  // a//c = (-a)//(-c)
    if (c == 1 || c == 0) return a;
    return floordiv_const(a, c, facts);
  }
  if (a.is_constant() && a.constant_value() == 0) return a;
  if (provably_nonzero(b, facts)) {
    if (a == b) return SymExpr::constant(1);
    if (std::optional<SymExpr> q = exact_quotient(a, b)) return *q;
    if (provably_below(a, b, facts)) return SymExpr::constant(0);
  }
  return SymBuild::make(SymKind::kFloorDiv, 0, {a, b});
}

SymExpr sym_mod(const SymExpr& a, const SymExpr& b, const SymFacts* facts) {
  if (b.is_constant()) {
    int64_t c = b.constant_value();
    assert(c != 0 && "mod by constant 0");
    if (c < 0) return -sym_mod(-a, SymExpr::constant(-c), facts);  // a%c = -((-a)%(-c))
    if (c == 1 || c == 0) return SymExpr::constant(0);
    return mod_const(a, c, facts);
  }
  if (a.is_constant() && a.constant_value() == 0) return a;
  if (provably_nonzero(b, facts)) {
    if (a == b || exact_quotient(a, b)) return SymExpr::constant(0);
    if (provably_below(a, b, facts)) return a;
  }
  return SymBuild::make(SymKind::kMod, 0, {a, b});
}

std::optional<SymExpr> sym_exact_quotient(const SymExpr& a, const SymExpr& b) {
  if (a == b) return SymExpr::constant(1);
  // b = coef * monomial: divide by the monomial, then every coefficient by coef.
  const Poly pb = to_poly(b);
  if (pb.c != 0 || pb.terms.size() != 1 || pb.terms[0].coef <= 0) return std::nullopt;
  std::optional<SymExpr> q = exact_quotient(a, pb.terms[0].mono);
  if (!q) return std::nullopt;
  const int64_t coef = pb.terms[0].coef;
  Poly p = to_poly(*q);
  if (p.c % coef != 0) return std::nullopt;
  p.c /= coef;
  for (Term& t : p.terms) {
    if (t.coef % coef != 0) return std::nullopt;
    t.coef /= coef;
  }
  return from_poly(std::move(p));
}

SymExpr sym_min(const SymExpr& a, const SymExpr& b, const SymFacts* facts) {
  return min_max(SymKind::kMin, a, b, facts);
}
SymExpr sym_max(const SymExpr& a, const SymExpr& b, const SymFacts* facts) {
  return min_max(SymKind::kMax, a, b, facts);
}

}  // namespace kiln
