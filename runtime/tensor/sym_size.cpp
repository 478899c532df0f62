// kiln::SymSize: symbolic sizes handed to user code inside a trace, their arithmetic, and
// specialisation (a guard in the trace's ShapeEnv) when user code needs an integer.
#include "kiln/sym_size.h"

#include "capture/trace.h"

namespace kiln {

SymInt to_sym_int(const SymSize& s) {
  if (!s.node()) return SymInt(s.hint());
  TraceContext* t = current_trace();
  if (!t || !t->owns(*s.node()))
    throw Error(invalid_argument("the symbolic size " + s.str() + " (taken at " + s.node()->loc +
                                 ") was used outside the trace that made it"));
  return s.node()->expr;
}

SymSize make_sym_size(const SymInt& v, const std::string& loc) {
  if (v.is_constant()) return SymSize(v.constant_value());
  TraceContext* t = current_trace();
  if (!t) throw Error(internal_error("symbolic size " + v.str() + " outside a trace"));
  SymInt simple = t->shape_env().simplify(v);
  if (simple.is_constant()) return SymSize(simple.constant_value());
  auto node = std::make_shared<detail::SymSizeNode>();
  node->expr = simple;
  node->trace = t;
  node->trace_id = current_trace_id();
  node->loc = loc;
  return SymSize(std::move(node), t->shape_env().hint(simple));
}

int64_t SymSize::specialize(const std::source_location* loc) const {
  TraceContext* t = current_trace();
  if (!t) return hint_;  // escaped the trace, used outside any: just the value it had
  if (!t->owns(*node_))
    throw Error(invalid_argument("the symbolic size " + str() + " (taken at " + node_->loc +
                                 ") belongs to another trace; take sizes inside the function"));
  const std::string where = loc ? loc_str(*loc) : node_->loc;
  // A data-dependent size (a nonzero count): its value, checked where the program needs it.
  if (auto v =
          t->data_dependent_value(node_->expr, "size " + node_->expr.str() + " used as an integer" +
                                                   (where.empty() ? "" : " at " + where)))
    return *v;
  auto v = t->shape_env().evaluate_guarding(
      node_->expr,
      "size " + node_->expr.str() + " used as an integer" + (where.empty() ? "" : " at " + where));
  if (!v.ok()) throw Error(v.status().with_context("'" + t->name() + "'"));
  return *v;
}

std::string SymSize::str() const {
  return node_ ? node_->expr.str() : std::to_string(hint_);
}

namespace {

template <typename Plain, typename Sym>
SymSize combine(const SymSize& a, const SymSize& b, Plain plain, Sym sym) {
  if (!a.is_symbolic() && !b.is_symbolic()) return SymSize(plain(a.hint(), b.hint()));
  const std::string& loc = (a.is_symbolic() ? a : b).node()->loc;
  return make_sym_size(sym(to_sym_int(a), to_sym_int(b)), loc);
}

void check_divisor(const SymSize& b, const char* op) {
  if (!b.is_symbolic() && b.hint() == 0)
    throw Error(invalid_argument(std::string("size arithmetic: ") + op + " by zero"));
}

}  // namespace

SymSize operator+(const SymSize& a, const SymSize& b) {
  return combine(
      a, b, [](int64_t x, int64_t y) { return x + y; },
      [](const SymInt& x, const SymInt& y) { return x + y; });
}
SymSize operator-(const SymSize& a, const SymSize& b) {
  return combine(
      a, b, [](int64_t x, int64_t y) { return x - y; },
      [](const SymInt& x, const SymInt& y) { return x - y; });
}
SymSize operator*(const SymSize& a, const SymSize& b) {
  return combine(
      a, b, [](int64_t x, int64_t y) { return x * y; },
      [](const SymInt& x, const SymInt& y) { return x * y; });
}
SymSize operator/(const SymSize& a, const SymSize& b) {
  check_divisor(b, "floor division");
  return combine(a, b, python_floordiv,
                 [](const SymInt& x, const SymInt& y) { return sym_floordiv(x, y); });
}
SymSize operator%(const SymSize& a, const SymSize& b) {
  check_divisor(b, "modulo");
  return combine(a, b, python_mod, [](const SymInt& x, const SymInt& y) { return sym_mod(x, y); });
}
SymSize sym_min(const SymSize& a, const SymSize& b) {
  return combine(
      a, b, [](int64_t x, int64_t y) { return std::min(x, y); },
      [](const SymInt& x, const SymInt& y) { return sym_min(x, y); });
}
SymSize sym_max(const SymSize& a, const SymSize& b) {
  return combine(
      a, b, [](int64_t x, int64_t y) { return std::max(x, y); },
      [](const SymInt& x, const SymInt& y) { return sym_max(x, y); });
}

bool size_relation_holds(const SymSize& a, SizeRelation rel, const SymSize& b,
                         std::source_location loc) {
  const RelOp op = static_cast<RelOp>(rel);
  static_assert(static_cast<int>(RelOp::kGe) == static_cast<int>(SizeRelation::kGe));
  if (!a.is_symbolic() && !b.is_symbolic()) return rel_holds(op, a.hint(), b.hint());
  TraceContext* t = current_trace();
  if (!t) return rel_holds(op, a.hint(), b.hint());  // escaped its trace: the values it had
  const SymRel r{op, to_sym_int(a), to_sym_int(b)};
  if (auto dd = t->decide_data_dependent(r, r.str() + " decided at " + loc_str(loc))) return *dd;
  auto v = t->shape_env().evaluate_guarding(r, r.str() + " decided at " + loc_str(loc));
  if (!v.ok()) throw Error(v.status().with_context("'" + t->name() + "'"));
  return *v;
}

bool Sizes::is_symbolic() const {
  for (const SymSize& d : dims_)
    if (d.is_symbolic()) return true;
  return false;
}

Shape Sizes::hints() const {
  Shape out;
  for (const SymSize& d : dims_) out.push_back(d.hint());
  return out;
}

Shape Sizes::values(std::source_location loc) const {
  Shape out;
  for (const SymSize& d : dims_) out.push_back(d.value(loc));
  return out;
}

std::string Sizes::str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) s += (i ? ", " : "") + dims_[i].str();
  return s + "]";
}

}  // namespace kiln
