// Guard records and the allocation-free GuardProgram; relation helpers.
//
// A GuardProgram is one flat vector of fixed-size instructions in postfix order: each guard's
// expression(s) are pushed onto a small fixed-size stack, then a check instruction pops them and
// returns the guard's index on failure. run() therefore touches no heap memory.
#include <algorithm>

#include "graph/symbolic.h"

namespace kiln {
namespace {

enum GuardOp : uint8_t {
  kPushConst,
  kPushSym,
  kAdd,
  kMul,
  kPow,
  kFloorDiv,
  kMod,
  kMin,
  kMax,
  kCheckEq,
  kCheckRange,
  kCheckRel,
  kCheckDiv,
};

int64_t wrap(uint64_t v) {
  return static_cast<int64_t>(v);
}

std::string range_str(int64_t lo, int64_t hi, const std::string& what) {
  std::string s = lo == SymRange::kNegInf ? "" : std::to_string(lo) + " <= ";
  s += what;
  return hi == SymRange::kPosInf ? s : s + " <= " + std::to_string(hi);
}

}  // namespace

// ---- relations -------------------------------------------------------------------------------

const char* rel_op_str(RelOp op) {
  static const char* const kNames[] = {"==", "!=", "<", "<=", ">", ">="};
  return kNames[static_cast<int>(op)];
}
RelOp negate(RelOp op) {
  static const RelOp kNeg[] = {RelOp::kNe, RelOp::kEq, RelOp::kGe,
                               RelOp::kGt, RelOp::kLe, RelOp::kLt};
  return kNeg[static_cast<int>(op)];
}
bool rel_holds(RelOp op, int64_t lhs, int64_t rhs) {
  switch (op) {
    case RelOp::kEq:
      return lhs == rhs;
    case RelOp::kNe:
      return lhs != rhs;
    case RelOp::kLt:
      return lhs < rhs;
    case RelOp::kLe:
      return lhs <= rhs;
    case RelOp::kGt:
      return lhs > rhs;
    case RelOp::kGe:
      return lhs >= rhs;
  }
  return false;
}
std::string SymRel::str() const {
  return lhs.str() + " " + rel_op_str(op) + " " + rhs.str();
}

const char* shape_guard_kind_name(ShapeGuardKind kind) {
  static const char* const kNames[] = {"equals_constant", "range", "relation", "divisible"};
  return kNames[static_cast<int>(kind)];
}

std::string ShapeGuard::to_string() const {
  std::string s;
  switch (kind) {
    case ShapeGuardKind::kEqualsConstant:
      s = lhs.str() + " == " + rhs.str();
      break;
    case ShapeGuardKind::kRange:
      s = range_str(lo, hi, lhs.str());
      break;
    case ShapeGuardKind::kRelation:
      s = lhs.str() + " " + rel_op_str(op) + " " + rhs.str();
      break;
    case ShapeGuardKind::kDivisible:
      s = lhs.str() + " % " + rhs.str() + " == 0";
      break;
  }
  return provenance.empty() ? s : s + "  # " + provenance;
}

// ---- GuardProgram ----------------------------------------------------------------------------

Status GuardProgram::emit(const SymExpr& e, int guard, int depth) {
  if (depth + 3 > kMaxStack) return internal_error("guard expression too deep: " + e.str());
  auto op = [&](GuardOp o, int64_t a = 0) { code_.push_back({o, 0, guard, a, 0}); };
  switch (e.kind()) {
    case SymKind::kConst:
      op(kPushConst, e.constant_value());
      break;
    case SymKind::kSymbol:
      op(kPushSym, e.symbol_id());
      break;
    case SymKind::kAdd:
      op(kPushConst, e.add_constant());
      for (size_t i = 0; i < e.args().size(); ++i) {
        KILN_RETURN_IF_ERROR(emit(e.args()[i], guard, depth + 1));
        if (e.ints()[i] != 1) op(kPushConst, e.ints()[i]), op(kMul);
        op(kAdd);
      }
      break;
    case SymKind::kMul:
      for (size_t i = 0; i < e.args().size(); ++i) {
        KILN_RETURN_IF_ERROR(emit(e.args()[i], guard, depth + (i > 0)));
        if (e.ints()[i] != 1) op(kPow, e.ints()[i]);
        if (i > 0) op(kMul);
      }
      break;
    case SymKind::kFloorDiv:
    case SymKind::kMod:
    case SymKind::kMin:
    case SymKind::kMax: {
      static const GuardOp kOps[] = {kFloorDiv, kMod, kMin, kMax};
      GuardOp o = kOps[static_cast<int>(e.kind()) - static_cast<int>(SymKind::kFloorDiv)];
      KILN_RETURN_IF_ERROR(emit(e.args()[0], guard, depth));
      for (const SymExpr& a : e.args().subspan(1)) {
        KILN_RETURN_IF_ERROR(emit(a, guard, depth + 1));
        op(o);
      }
      break;
    }
  }
  return Status::ok_status();
}

Status GuardProgram::add(const ShapeGuard& g, int index) {
  const size_t start = code_.size();
  Status st = emit(g.lhs, index, 0);
  if (st.ok() && g.kind == ShapeGuardKind::kRelation) st = emit(g.rhs, index, 1);
  if (!st.ok()) {
    code_.resize(start);
    return st;
  }
  Instr check{0, static_cast<uint8_t>(g.op), index, 0, 0};
  switch (g.kind) {
    case ShapeGuardKind::kEqualsConstant:
      check.op = kCheckEq, check.a = g.rhs.constant_value();
      break;
    case ShapeGuardKind::kRange:
      check.op = kCheckRange, check.a = g.lo, check.b = g.hi;
      break;
    case ShapeGuardKind::kRelation:
      check.op = kCheckRel;
      break;
    case ShapeGuardKind::kDivisible:
      check.op = kCheckDiv, check.a = g.rhs.constant_value();
      break;
  }
  code_.push_back(check);
  return Status::ok_status();
}

int GuardProgram::run(std::span<const int64_t> values) const {
  int64_t st[kMaxStack];
  int sp = 0;
  for (const Instr& in : code_) {
    int64_t x = sp > 0 ? st[sp - 1] : 0, y = sp > 1 ? st[sp - 2] : 0;  // top, below top
    switch (in.op) {
      case kPushConst:
        st[sp++] = in.a;
        break;
      case kPushSym:
        if (static_cast<uint64_t>(in.a) >= values.size()) return in.guard;
        st[sp++] = values[static_cast<size_t>(in.a)];
        break;
      case kAdd:
        st[--sp - 1] = wrap(static_cast<uint64_t>(y) + static_cast<uint64_t>(x));
        break;
      case kMul:
        st[--sp - 1] = wrap(static_cast<uint64_t>(y) * static_cast<uint64_t>(x));
        break;
      case kPow: {
        uint64_t r = 1;
        for (int64_t i = 0; i < in.a; ++i) r *= static_cast<uint64_t>(x);
        st[sp - 1] = wrap(r);
        break;
      }
      case kFloorDiv:
      case kMod:
        if (x == 0) return in.guard;
        st[--sp - 1] = in.op == kFloorDiv ? python_floordiv(y, x) : python_mod(y, x);
        break;
      case kMin:
        st[--sp - 1] = std::min(x, y);
        break;
      case kMax:
        st[--sp - 1] = std::max(x, y);
        break;
      case kCheckEq:
        if (st[--sp] != in.a) return in.guard;
        break;
      case kCheckRange:
        if (--sp, x < in.a || x > in.b) return in.guard;
        break;
      case kCheckRel:
        if (sp -= 2, !rel_holds(static_cast<RelOp>(in.rel), y, x)) return in.guard;
        break;
      case kCheckDiv:
        if (--sp, python_mod(x, in.a) != 0) return in.guard;
        break;
    }
  }
  return -1;
}

}  // namespace kiln
