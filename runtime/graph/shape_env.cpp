// ShapeEnv: symbols, facts (substitutions, ranges, divisors) and guarded decisions.
#include <algorithm>
#include <cassert>
#include <functional>
#include <numeric>

#include "graph/symbolic.h"

namespace kiln {
namespace {

std::string range_str(int64_t lo, int64_t hi, const std::string& what) {
  std::string s = lo == SymRange::kNegInf ? "" : std::to_string(lo) + " <= ";
  s += what;
  return hi == SymRange::kPosInf ? s : s + " <= " + std::to_string(hi);
}

}  // namespace

// ---- ShapeEnv: symbols and facts -------------------------------------------------------------

int ShapeEnv::create_symbol(int64_t hint, std::string source, int64_t min, int64_t max) {
  assert(min <= hint && hint <= max && "a symbol's hint must lie in its range");
  symbols_.push_back({hint, {min, max}, 1, std::move(source), "", false});
  replacements_.emplace_back();
  hints_.push_back(hint);
  frozen_ = false;
  return num_symbols() - 1;
}

int ShapeEnv::create_unbacked_symbol(int64_t hint, std::string source) {
  symbols_.push_back({hint, {0, SymRange::kPosInf}, 1, std::move(source), "", false, true});
  replacements_.emplace_back();
  hints_.push_back(hint);
  frozen_ = false;
  return num_symbols() - 1;
}

void ShapeEnv::set_hint(int id, int64_t value) {
  symbols_.at(static_cast<size_t>(id)).hint = value;
  hints_.at(static_cast<size_t>(id)) = value;
}

std::vector<int> ShapeEnv::unbacked_symbols() const {
  std::vector<int> out;
  for (int s = 0; s < num_symbols(); ++s)
    if (info(s).unbacked) out.push_back(s);
  return out;
}

SymInt ShapeEnv::symbol_for_value(int64_t value, std::string source, int* out_symbol) {
  const bool zero_one = options_.specialize_zero_one && (value == 0 || value == 1);
  const int64_t min = zero_one ? value : std::min<int64_t>(2, std::max<int64_t>(value, 0));
  const int id = create_symbol(value, source, min, zero_one ? value : SymRange::kPosInf);
  if (out_symbol) *out_symbol = id;
  auto it =
      std::find_if(duck_.begin(), duck_.end(), [&](const auto& d) { return d.first == value; });
  if (zero_one) {
    replacements_[id] = SymExpr::constant(value);
    record({ShapeGuardKind::kEqualsConstant, symbol(id), RelOp::kEq, SymExpr::constant(value), 0, 0,
            "0/1 specialisation of " + source});
    return value;
  }
  if (!options_.duck_sizing || it == duck_.end()) {
    if (options_.duck_sizing) duck_.emplace_back(value, id);
    return SymInt(symbol(id));
  }
  replacements_[id] = symbol(it->second);
  record({ShapeGuardKind::kRelation, symbol(id), RelOp::kEq, symbol(it->second), 0, 0,
          "duck sizing: " + source + " == " + info(it->second).source});
  return simplify(SymInt(symbol(id)));
}

Status ShapeEnv::mark_dynamic(int id) {
  SymExpr e = simplify(symbol(id));
  if (e.is_constant()) {
    return invalid_argument("cannot mark s" + std::to_string(id) + " (" + info(id).source +
                            ") dynamic: it is specialised to " + e.str());
  }
  symbols_[static_cast<size_t>(id)].dynamic = true;
  for (int s : e.free_symbols()) symbols_[static_cast<size_t>(s)].dynamic = true;
  return Status::ok_status();
}

SymRange ShapeEnv::symbol_range(int s) const {
  return s >= 0 && s < num_symbols() ? info(s).range : SymRange{};
}
int64_t ShapeEnv::symbol_divisor(int s) const {
  return s >= 0 && s < num_symbols() ? info(s).divisor : 1;
}

SymExpr ShapeEnv::simplify(const SymExpr& e) const {
  // Replacements alone: each was solved in terms of symbols that had none, so chains end.
  // (Resolving them through simplify() itself would rewrite the known values again at every
  // step, and a known value that mentions a replaced symbol would never finish.)
  std::function<std::optional<SymExpr>(int)> plain = [&](int s) -> std::optional<SymExpr> {
    if (s < 0 || s >= num_symbols() || !replacements_[static_cast<size_t>(s)]) return std::nullopt;
    return sym_substitute(*replacements_[static_cast<size_t>(s)], plain, this);
  };
  if (known_values_.empty()) return sym_substitute(e, plain, this);
  // Known expressions in today's canonical form (substitutions may have been added since).
  std::vector<std::pair<SymExpr, int64_t>> known;
  for (const auto& [x, v] : known_values_) known.emplace_back(sym_substitute(x, plain, this), v);
  auto replace_node = [&known](const SymExpr& x) -> std::optional<SymExpr> {
    for (const auto& [k, v] : known)
      if (x == k) return SymExpr::constant(v);
    return std::nullopt;
  };
  // Inside replacements too, known values fold.
  std::function<std::optional<SymExpr>(int)> replace = [&](int s) -> std::optional<SymExpr> {
    if (s < 0 || s >= num_symbols() || !replacements_[static_cast<size_t>(s)]) return std::nullopt;
    return sym_rewrite(*replacements_[static_cast<size_t>(s)], replace, replace_node, this);
  };
  return sym_rewrite(e, replace, replace_node, this);
}
SymInt ShapeEnv::simplify(const SymInt& v) const {
  return v.is_constant() ? v : SymInt(simplify(v.expr()));
}
int64_t ShapeEnv::hint(const SymInt& v) const {
  return v.evaluate(hints_);
}
SymRange ShapeEnv::bound(const SymInt& v) const {
  return sym_bound(simplify(v).expr(), this);
}

bool ShapeEnv::statically_known_true(const SymRel& rel) const {
  SymRange r = bound(rel.lhs - rel.rhs);
  switch (rel.op) {
    case RelOp::kEq:
      return r.lo == 0 && r.hi == 0;
    case RelOp::kNe:
      return r.lo > 0 || r.hi < 0;
    case RelOp::kLt:
      return r.hi < 0;
    case RelOp::kLe:
      return r.hi <= 0;
    case RelOp::kGt:
      return r.lo > 0;
    case RelOp::kGe:
      return r.lo >= 0;
  }
  return false;
}

bool ShapeEnv::known_divisible(const SymInt& e, int64_t d) const {
  SymExpr m = sym_mod(simplify(e).expr(), SymExpr::constant(d), this);
  return m.is_constant() && m.constant_value() == 0;
}

void ShapeEnv::record(ShapeGuard guard) {
  if (on_guard_) on_guard_(guard);
  recorded_.push_back(std::move(guard));
  frozen_ = false;
}

// ---- ShapeEnv: decisions and guards ----------------------------------------------------------

Status ShapeEnv::check_specialisable(const SymExpr& e, int64_t value,
                                     const std::string& why) const {
  for (int s : e.free_symbols()) {
    if (!info(s).dynamic) continue;
    return invalid_argument("cannot specialise " + e.str() + " to " + std::to_string(value) +
                            ": s" + std::to_string(s) + " (" + info(s).source +
                            ") is marked dynamic; required by " + why);
  }
  return Status::ok_status();
}

Status ShapeEnv::check_backed(const SymExpr& e, const std::string& what,
                              const std::string& why) const {
  for (int s : e.free_symbols()) {
    if (!info(s).unbacked) continue;
    return invalid_argument("data-dependent size: deciding " + what + " would need a guard on s" +
                            std::to_string(s) + " (" + info(s).source +
                            "), whose value is known only when the graph runs; required by " + why);
  }
  return Status::ok_status();
}

Status ShapeEnv::record_equal(const SymExpr& lhs, const SymExpr& rhs, const std::string& why) {
  KILN_RETURN_IF_ERROR(check_backed(lhs - rhs, lhs.str() + " == " + rhs.str(), why));
  const int64_t hl = lhs.evaluate(hints_), hr = rhs.evaluate(hints_);
  if (hl != hr) {
    return invalid_argument(lhs.str() + " == " + rhs.str() + " contradicts the observed sizes (" +
                            std::to_string(hl) + " vs " + std::to_string(hr) + "): " + why);
  }
  if (lhs.is_constant() != rhs.is_constant()) {
    KILN_RETURN_IF_ERROR(check_specialisable(lhs.is_constant() ? rhs : lhs, hl, why));
  }
  const SymExpr d = simplify(lhs - rhs);
  if (d.is_constant()) return Status::ok_status();
  if (d.kind() == SymKind::kMod && d.args()[1].is_constant()) {  // x % c == 0
    return add_divisibility(SymInt(d.args()[0]), d.args()[1].constant_value(), why);
  }
  // Solve for the newest symbol that appears once, linearly, with coefficient +-1.
  std::vector<std::pair<SymExpr, int64_t>> terms{{d, 1}};
  if (d.kind() == SymKind::kAdd) {
    terms.clear();
    for (size_t i = 0; i < d.args().size(); ++i) terms.emplace_back(d.args()[i], d.ints()[i]);
  }
  int pick = -1;
  int64_t coef = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto& [t, c] = terms[i];
    if (!t.is_symbol() || (c != 1 && c != -1) || t.symbol_id() <= pick) continue;
    bool elsewhere = false;
    for (size_t j = 0; j < terms.size(); ++j) {
      std::vector<int> fs = terms[j].first.free_symbols();
      elsewhere |= j != i && std::count(fs.begin(), fs.end(), t.symbol_id()) > 0;
    }
    if (!elsewhere) pick = t.symbol_id(), coef = c;
  }
  const bool to_constant = rhs.is_constant() || lhs.is_constant();
  record({to_constant ? ShapeGuardKind::kEqualsConstant : ShapeGuardKind::kRelation,
          lhs.is_constant() ? rhs : lhs, RelOp::kEq, lhs.is_constant() ? lhs : rhs, 0, 0, why});
  if (pick < 0) {
    if (to_constant)
      known_values_.emplace_back(simplify(lhs.is_constant() ? rhs : lhs),
                                 (lhs.is_constant() ? lhs : rhs).constant_value());
    return Status::ok_status();
  }
  const SymExpr sol =
      simplify((d - symbol(pick) * SymExpr::constant(coef)) * SymExpr::constant(-coef));
  SymbolInfo& s = symbols_[static_cast<size_t>(pick)];
  if (sol.is_constant()) {
    KILN_RETURN_IF_ERROR(check_specialisable(symbol(pick), sol.constant_value(), why));
  } else if (sol.is_symbol()) {  // the survivor inherits the range and divisor
    SymbolInfo& t = symbols_[static_cast<size_t>(sol.symbol_id())];
    t.range = {std::max(t.range.lo, s.range.lo), std::min(t.range.hi, s.range.hi)};
    t.divisor = std::lcm(t.divisor, s.divisor);
    t.dynamic |= s.dynamic;
  }
  replacements_[static_cast<size_t>(pick)] = sol;
  return Status::ok_status();
}

Status ShapeEnv::add_equality(const SymInt& a, const SymInt& b, std::string provenance) {
  return record_equal(simplify(a).expr(), simplify(b).expr(), provenance);
}

Status ShapeEnv::add_divisibility(const SymInt& e, int64_t d, std::string provenance) {
  if (d <= 0) return invalid_argument("divisor must be positive: " + provenance);
  const SymExpr x = simplify(e).expr();
  if (known_divisible(SymInt(x), d)) return Status::ok_status();
  KILN_RETURN_IF_ERROR(check_backed(x, x.str() + " % " + std::to_string(d) + " == 0", provenance));
  if (python_mod(x.evaluate(hints_), d) != 0) {
    return invalid_argument(x.str() + " % " + std::to_string(d) +
                            " == 0 contradicts the observed size " +
                            std::to_string(x.evaluate(hints_)) + ": " + provenance);
  }
  if (x.is_symbol()) {
    int64_t& div = symbols_[static_cast<size_t>(x.symbol_id())].divisor;
    div = std::lcm(div, d);
  }
  record({ShapeGuardKind::kDivisible, x, RelOp::kEq, SymExpr::constant(d), 0, 0, provenance});
  return Status::ok_status();
}

Status ShapeEnv::constrain_range(int id, int64_t min, int64_t max, std::string provenance) {
  const SymExpr x = simplify(symbol(id));
  KILN_RETURN_IF_ERROR(check_backed(x, range_str(min, max, x.str()), provenance));
  const int64_t h = x.evaluate(hints_);
  if (h < min || h > max) {
    return invalid_argument(range_str(min, max, x.str()) + " excludes the observed size " +
                            std::to_string(h) + ": " + provenance);
  }
  if (x.is_constant()) return Status::ok_status();
  if (!x.is_symbol()) {
    record({ShapeGuardKind::kRange, x, RelOp::kEq, SymExpr(), min, max, provenance});
    return Status::ok_status();
  }
  SymbolInfo& s = symbols_[static_cast<size_t>(x.symbol_id())];
  s.range = {std::max(s.range.lo, min), std::min(s.range.hi, max)};
  s.range_reason += (s.range_reason.empty() ? "" : "; ") + provenance;
  frozen_ = false;
  return Status::ok_status();
}

Expected<int64_t> ShapeEnv::evaluate_guarding(const SymInt& v, std::string provenance) {
  const SymExpr x = simplify(v).expr();
  if (x.is_constant()) return x.constant_value();
  const int64_t value = x.evaluate(hints_);
  KILN_RETURN_IF_ERROR(record_equal(x, SymExpr::constant(value), provenance));
  return value;
}

Expected<bool> ShapeEnv::evaluate_guarding(const SymRel& rel, std::string provenance) {
  if (statically_known_true(rel)) return true;
  if (statically_known_true({negate(rel.op), rel.lhs, rel.rhs})) return false;
  SymExpr l = simplify(rel.lhs).expr(), r = simplify(rel.rhs).expr();
  KILN_RETURN_IF_ERROR(check_backed(l - r, SymRel{rel.op, SymInt(l), SymInt(r)}.str(), provenance));
  const bool holds = rel_holds(rel.op, l.evaluate(hints_), r.evaluate(hints_));
  RelOp op = holds ? rel.op : negate(rel.op);
  if (op == RelOp::kEq) {
    KILN_RETURN_IF_ERROR(record_equal(l, r, provenance));
    return holds;
  }
  if (l.is_constant() && r.is_symbol()) {  // put the symbol on the left
    std::swap(l, r);
    static const RelOp kFlip[] = {RelOp::kEq, RelOp::kNe, RelOp::kGt,
                                  RelOp::kGe, RelOp::kLt, RelOp::kLe};
    op = kFlip[static_cast<int>(op)];
  }
  if (l.is_symbol() && r.is_constant() && op != RelOp::kNe) {  // narrow the range instead
    const int64_t c = r.constant_value();
    int64_t lo = SymRange::kNegInf, hi = SymRange::kPosInf;
    if (op == RelOp::kLt) hi = c - 1;
    if (op == RelOp::kLe) hi = c;
    if (op == RelOp::kGt) lo = c + 1;
    if (op == RelOp::kGe) lo = c;
    KILN_RETURN_IF_ERROR(constrain_range(l.symbol_id(), lo, hi, provenance));
    return holds;
  }
  record({ShapeGuardKind::kRelation, l, op, r, 0, 0, provenance});
  return holds;
}

Expected<int64_t> ShapeEnv::specialize(int id, std::string reason) {
  return evaluate_guarding(SymInt(symbol(id)), std::move(reason));
}

std::vector<ShapeGuard> ShapeEnv::guards() const {
  std::vector<ShapeGuard> out;
  for (int id = 0; id < num_symbols(); ++id) {
    const SymbolInfo& s = info(id);
    if (replacements_[static_cast<size_t>(id)] || s.range == SymRange{} || s.unbacked) continue;
    std::string why = "size of " + s.source + (s.range_reason.empty() ? "" : "; " + s.range_reason);
    out.push_back({ShapeGuardKind::kRange, symbol(id), RelOp::kEq, SymExpr(), s.range.lo,
                   s.range.hi, std::move(why)});
  }
  out.insert(out.end(), recorded_.begin(), recorded_.end());
  return out;
}

Status ShapeEnv::freeze() {
  program_ = GuardProgram();
  std::vector<ShapeGuard> all = guards();
  for (size_t i = 0; i < all.size(); ++i) {
    KILN_RETURN_IF_ERROR(program_.add(all[i], static_cast<int>(i)));
  }
  frozen_ = true;
  return Status::ok_status();
}

int ShapeEnv::check_guards(std::span<const int64_t> values) const {
  assert(frozen_ && "ShapeEnv::check_guards before freeze()");
  assert(values.size() >= symbols_.size());
  return program_.run(values);
}

}  // namespace kiln
