// GLSL expressions of the elementwise ops (kiln/elementwise_ops.def and the ops written out
// here), and the float arithmetic with a literal +0.0 operand that goes through helpers.
#include "codegen/emit.h"

#include <cmath>
#include <string_view>

#include "codegen/emit_internal.h"

namespace kiln {

namespace {
/// The GLSL function of a unary op on float / vec4 values (kiln/elementwise_ops.def).
const char* unary_glsl(OpKind op) {
  switch (op) {
#define KILN_UNARY(e, name, ints, glsl) \
  case OpKind::e:                       \
    return #glsl;
#include "kiln/elementwise_ops.def"
#undef KILN_UNARY
    default:
      unreachable("not a unary op");
  }
}

/// The GLSL function of a binary op on floats, or null where op_expr writes the op out
/// (`custom` in kiln/elementwise_ops.def).
const char* binary_glsl(OpKind op) {
  switch (op) {
#define KILN_BINARY(e, name, dtypes, glsl) \
  case OpKind::e:                          \
    return std::string_view(#glsl) == "custom" ? nullptr : #glsl;
#include "kiln/elementwise_ops.def"
#undef KILN_BINARY
    default:
      return nullptr;
  }
}

/// The GLSL operator of an arithmetic or compare op written as one (glsl_binary picks the
/// operator or, for int64 pairs, its function), or null.
const char* operator_of(OpKind op) {
  switch (op) {
    case OpKind::Add:
      return "+";
    case OpKind::Sub:
      return "-";
    case OpKind::Mul:
      return "*";
    case OpKind::Eq:
      return "==";
    case OpKind::Ne:
      return "!=";
    case OpKind::Lt:
      return "<";
    case OpKind::Le:
      return "<=";
    case OpKind::Gt:
      return ">";
    case OpKind::Ge:
      return ">=";
    default:
      return nullptr;
  }
}

/// triu / tril whose mask is false at every element of a static-sized matrix (e.g. triu(x, 2)
/// of 1x1 matrices): every element is 0, and the kernel's mask condition is a constant.
bool all_zero_triangle(const Node& n) {
  if (n.op != OpKind::Triu && n.op != OpKind::Tril) return false;
  const SymInt& rows = n.sym[n.sym.size() - 2];
  const SymInt& cols = n.sym.back();
  if (!rows.is_constant() || !cols.is_constant()) return false;
  // Element (r, c) is kept where c - r >= k (triu) or c - r <= k (tril).
  const int64_t k = n.attrs.index;
  return n.op == OpKind::Triu ? cols.constant_value() - 1 < k : 1 - rows.constant_value() > k;
}
}  // namespace

bool Emitter::empty_inner_dim(const Node& matmul) const {
  const SymShape& a = graph_.node(matmul.inputs[0]).sym;
  if (a.empty()) return false;
  const SymInt& k = a.size() == 1 ? a[0] : a[a.size() - (matmul.attrs.trans_a ? 2 : 1)];
  return k.is_constant() && k.constant_value() == 0;
}

bool Emitter::is_literal_pos_zero(NodeId id) const {
  // Follow views and casts down to a Full (or a triangle of zeros), then encode its value back
  // up the chain.
  std::vector<DType> casts;
  for (;;) {
    const Node& n = graph_.node(id);
    if (fusion_.materialize[id] && id != root_) return false;  // loaded, not a literal
    if (n.op == OpKind::Full || all_zero_triangle(n)) break;
    // A matmul over a constant empty inner dimension is +0 everywhere; its accumulator starts
    // at the literal 0.0 and no loop runs, so the driver folds the epilogue by that constant.
    if (n.op == OpKind::MatMul && empty_inner_dim(n)) return true;
    if (!is_movement(n.op) && n.op != OpKind::Cast) return false;
    if (n.op == OpKind::Cast) casts.push_back(n.meta.dtype);
    id = n.inputs[0];
  }
  const Node& full = graph_.node(id);
  Literal v = full.op != OpKind::Full    ? Literal{true, 0, 0}
              : full.attrs.scalar_is_int ? Literal{true, full.attrs.scalar_int, 0}
                                         : Literal{false, 0, full.attrs.scalar};
  v = encode_literal(v, full.meta.dtype);
  for (size_t i = casts.size(); i-- > 0;) v = encode_literal(v, casts[i]);
  return v.integral ? v.i == 0 : v.f == 0 && !std::signbit(v.f);
}

std::string Emitter::zero_operand_expr(const Node& n, const std::vector<std::string>& args,
                                       const std::vector<DType>& types) {
  const DType out = n.meta.dtype;
  if (!is_floating(out) || n.inputs.size() != 2) return "";
  const bool z0 = is_literal_pos_zero(n.inputs[0]), z1 = is_literal_pos_zero(n.inputs[1]);
  auto arg = [&](size_t i) { return glsl_compute_convert(args[i], types[i], out); };
  switch (n.op) {
    case OpKind::Add:
      if (z1) return "kiln_add_zero(" + arg(0) + ")";
      if (z0) return "kiln_add_zero(" + arg(1) + ")";
      return "";
    case OpKind::Sub:  // x - 0.0 is x exactly, as folded
      return z0 ? "kiln_zero_sub(" + arg(1) + ")" : "";
    case OpKind::Mul:
      if (z1) return "kiln_mul_zero(" + arg(0) + ")";
      if (z0) return "kiln_mul_zero(" + arg(1) + ")";
      return "";
    case OpKind::Div:  // x / 0.0 is kiln_div's own case
      return z0 ? "kiln_zero_div(" + arg(1) + ")" : "";
    default:
      return "";
  }
}

std::string Emitter::op_expr(const Node& n, const std::vector<std::string>& args,
                             const std::vector<DType>& types) {
  DType out = n.meta.dtype;
  // Operand type: compares and `where` use the promoted input type; everything else the output.
  DType operand = out;
  if (op_category(n.op) == OpCategory::kCompare) {
    operand = promote_types(types[0], types[1]);
    if (operand == DType::kBool) operand = DType::kI32;  // GLSL has no ordered compare on bool
  }
  auto arg = [&](size_t i) {
    if (n.op == OpKind::Where && i == 0) return args[0];
    return glsl_compute_convert(args[i], types[i], operand);
  };
  std::string T = vtype(operand);
  if (operand == DType::kI64 && int64_pairs()) return int64_pair_expr(n, args, types, operand);
  if (op_category(n.op) == OpCategory::kUnary) {
    // Floats: the op's GLSL function from kiln/elementwise_ops.def. Integers reach here only
    // for the ops that keep them (KeepsInts), spelled out below.
    if (is_floating(operand)) return std::string(unary_glsl(n.op)) + "(" + arg(0) + ")";
    const std::string x = arg(0);
    switch (n.op) {
      case OpKind::Neg:
        return "(-" + x + ")";
      case OpKind::Relu:
        return operand == DType::kI64 ? "kiln_max_i64(" + x + ", int64_t(0))"
                                      : "kiln_max_i32(" + x + ", 0)";
      case OpKind::Abs:
        return "(" + x + " < " + T + "(0) ? -" + x + " : " + x + ")";
      case OpKind::Sign:
        return "(" + x + " > " + T + "(0) ? " + T + "(1) : (" + x + " < " + T + "(0) ? " + T +
               "(-1) : " + T + "(0)))";
      case OpKind::Floor:  // integers pass through
      case OpKind::Ceil:
      case OpKind::Round:
        return x;
      default:
        throw Error(internal_error(std::string(op_name(n.op)) + " has no integer form in codegen"));
    }
  }
  if (op_category(n.op) == OpCategory::kBinary) {
    const char* f = binary_glsl(n.op);
    if (f && is_floating(operand)) return std::string(f) + "(" + arg(0) + ", " + arg(1) + ")";
    // A table op whose dtypes admit integers writes its integer form here.
    if (f)
      throw Error(internal_error(std::string(op_name(n.op)) + " has no integer form in codegen"));
  }
  if (const char* op = operator_of(n.op)) return glsl_binary(op, arg(0), arg(1), operand);
  switch (n.op) {
    case OpKind::Pow:
      pow_ = true;
      return std::string(is_floating(operand) ? "kiln_pow(" : "kiln_ipow(") + arg(0) + ", " +
             arg(1) + ")";
    case OpKind::Mod:
    case OpKind::FMod:
      if (operand == DType::kI64) mod64_ = true;
      return std::string(n.op == OpKind::Mod ? "kiln_mod(" : "kiln_fmod(") + arg(0) + ", " +
             arg(1) + ")";
    case OpKind::ShiftLeft:
    case OpKind::ShiftRight: {  // out-of-range amounts: 0 (left) or the sign fill (right)
      const std::string w = operand == DType::kI64 ? "64" : "32", a = arg(0), b = arg(1);
      const std::string in_range =
          "(" + b + " >= " + T + "(0) && " + b + " < " + T + "(" + w + "))";
      if (n.op == OpKind::ShiftLeft)
        return "(" + in_range + " ? " + a + " << int(" + b + ") : " + T + "(0))";
      return "(" + in_range + " ? " + a + " >> int(" + b + ") : (" + a + " < " + T + "(0) ? " + T +
             "(-1) : " + T + "(0)))";
    }
    case OpKind::Div:
      div_ = true;
      return "kiln_div(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::Maximum:
      return std::string(is_floating(operand)     ? "kiln_maximum("
                         : operand == DType::kI64 ? "kiln_max_i64("
                                                  : "kiln_max_i32(") +
             arg(0) + ", " + arg(1) + ")";
    case OpKind::Minimum:
      return std::string(is_floating(operand)     ? "kiln_minimum("
                         : operand == DType::kI64 ? "kiln_min_i64("
                                                  : "kiln_min_i32(") +
             arg(0) + ", " + arg(1) + ")";
    case OpKind::Where:
      return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
    case OpKind::Cast:
      return glsl_convert(args[0], types[0], out);
    default:
      unreachable("not an elementwise op");
  }
}

std::string Emitter::int64_pair_expr(const Node& n, const std::vector<std::string>& args,
                                     const std::vector<DType>& types, DType operand) {
  auto arg = [&](size_t i) {
    if (n.op == OpKind::Where && i == 0) return args[0];
    return glsl_compute_convert(args[i], types[i], operand);
  };
  if (const char* op = operator_of(n.op)) return glsl_binary(op, arg(0), arg(1), operand);
  switch (n.op) {
    case OpKind::Neg:
      return "kiln_i64_neg(" + arg(0) + ")";
    case OpKind::Relu:
      return "kiln_max_i64(" + arg(0) + ", uvec2(0u))";
    case OpKind::Abs:
      return "kiln_i64_abs(" + arg(0) + ")";
    case OpKind::Sign:
      return "kiln_i64_sign(" + arg(0) + ")";
    case OpKind::Floor:  // integers pass through
    case OpKind::Ceil:
    case OpKind::Round:
      return arg(0);
    case OpKind::Pow:  // (a loop over the exponent's bits, as the remainder's below)
      pow_ = true;
      ++helper_loops_;
      return "kiln_ipow(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::Mod:
      ++helper_loops_;
      return "kiln_mod(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::FMod:
      ++helper_loops_;
      return "kiln_fmod(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::ShiftLeft:
      return "kiln_i64_shift_left(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::ShiftRight:
      return "kiln_i64_shift_right(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::Maximum:
      return "kiln_max_i64(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::Minimum:
      return "kiln_min_i64(" + arg(0) + ", " + arg(1) + ")";
    case OpKind::Where:
      return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
    case OpKind::Cast:
      return glsl_convert(args[0], types[0], n.meta.dtype);
    default:
      throw Error(internal_error(std::string(op_name(n.op)) + " has no int64 form in codegen"));
  }
}

}  // namespace kiln
