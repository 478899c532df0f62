// The program generator: grows a random well-typed program one step at a time, tracking every
// value's dtype, symbolic shape and a few numeric facts that keep the comparison meaningful.
//
// Numeric facts per value (Val): `bound` caps the finite magnitudes, so ops that amplify error
// (exp, pow, division, f16 overflow) are only applied where the interpreter and the device can
// agree to a tolerance; `exact` marks values that every backend computes bit for bit (selections,
// integer arithmetic, f32 add/sub of exact values, casts), the only floats whose sign or
// integer part later ops may depend on (casts to int or bool, log / sqrt / division operands);
// `special` marks values that may hold NaN, inf or -0.0; `pos` values are >= 0.25.
// Ops whose operand lacks a needed fact get one by a wrapper step (abs(x) + 0.5), as user code
// would write it.
//
// Known limits (docs/testing.md), kept out unless GenOptions::known_defects is set:
//   * eager Vulkan ops are cached by the op's printed text, where scalars keep 9 digits: two
//     integer scalars above 1e9 that agree in 9 digits share one kernel. Integer scalars above
//     1e9 are drawn from kLargeScalars (distinct in 9 digits) instead.
//   * int64 scalars travel as double: values past 2^53 are rounded. Never drawn by default.
#include <algorithm>
#include <cmath>
#include <limits>

#include "fuzz/gen_state.h"

namespace kiln::fuzz::gen {

Program Gen::run() {
  choose_sizes();
  const int n_inputs = static_cast<int>(r_.range(1, 2));
  for (int i = 0; i < n_inputs; ++i) {
    GShape s = rand_shape(static_cast<int>(r_.range(0, 4)), p_.dynamic != Dynamic::kFalse || i > 0);
    if (p_.dynamic != Dynamic::kFalse && i == 0 && !has_var(s)) {
      if (s.empty())
        s.push_back(var_dim());
      else
        s[static_cast<size_t>(r_.range(0, static_cast<int64_t>(s.size()) - 1))] = var_dim();
      if (numel_hi(s) > kMaxNumel) s = {var_dim()};
    }
    DType dt = rand_dtype();
    leaf(dt, s, rand_fill(dt), {}, /*force_input=*/true);
  }
  const int target = static_cast<int>(r_.range(2, 9));
  for (int tries = 0; ops_ < target && tries < 200; ++tries) one_step();
  if (ops_ == 0) {  // always at least one op
    int a = static_cast<int>(vals_.size()) - 1;
    Step s;
    s.kind = StepKind::kUnsqueeze;
    s.args = {a};
    s.ints = {0};
    Val v = val(a);
    v.shape.insert(v.shape.begin(), GDim{1, 0});
    add_step(s, v);
  }
  std::vector<int> ops;
  for (int i = 0; i < static_cast<int>(p_.steps.size()); ++i)
    if (p_.steps[static_cast<size_t>(i)].kind != StepKind::kLeaf) ops.push_back(i);
  p_.outputs.push_back(ops.back());
  if (ops.size() > 1 && r_.chance(0.3)) {
    int other = ops[static_cast<size_t>(r_.range(0, static_cast<int64_t>(ops.size()) - 2))];
    p_.outputs.push_back(other);
  }
  for (int o : p_.outputs) p_.output_lowp.push_back(val(o).lowp || val(o).dtype == DType::kF16);
  return std::move(p_);
}

void Gen::choose_sizes() {
  if (r_.chance(0.55)) {
    p_.dynamic = r_.chance(0.5) ? Dynamic::kFalse : Dynamic::kAuto;
    p_.sizes = {r_.pick(std::vector<int64_t>{0, 1, 1, 2, 3, 3, 4, 5, 7})};
  } else {
    p_.dynamic = r_.chance(0.6) ? Dynamic::kTrue : Dynamic::kAuto;
    p_.sizes = {r_.range(2, 6)};
    const int more = static_cast<int>(r_.range(1, 2));
    for (int i = 0; i < more; ++i) {
      int64_t n;
      do {
        n = r_.pick(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 9});
      } while (n == p_.sizes.back());
      p_.sizes.push_back(n);
    }
  }
  nmin_ = *std::min_element(p_.sizes.begin(), p_.sizes.end());
  nmax_ = *std::max_element(p_.sizes.begin(), p_.sizes.end());
}

void Gen::one_step() {
  const double u = r_.unit() * 100;
  if (u < 12) return unary();
  if (u < 26) return binary(false);
  if (u < 33) return binary_scalar();
  if (u < 39) return binary(true);
  if (u < 43) return where_op();
  if (u < 45) return masked_fill_op();
  if (u < 51) return cast_op();
  if (u < 59) return reduce_op();
  if (u < 61) return opt_.interpreter_only_ops ? arg_reduce() : reduce_op();
  if (u < 66) return matmul_op();
  if (u < 69) return softmax_op();
  if (u < 71) return layer_norm_op();
  if (u < 81) return view_op();
  if (u < 85) return slice_op();
  if (u < 88) return concat_op();
  if (u < 92) return index_op();
  if (u < 94) return triangle_op();
  if (u < 96) return creation_op();
  return break_op();
}

namespace {

// The elementwise rows the generator does not draw, each with its reason. Every other row of
// kiln/elementwise_ops.def is drawn, so a new row is fuzzed without an edit here.
bool not_drawn(OpKind op) {
  switch (op) {
    // Remainders jump at every multiple of the divisor: a float computed two ways may land on
    // either side (tests/null/remainder_shift_test.cpp and the device one cover them).
    case OpKind::Mod:
    case OpKind::FMod:
    // Integer tensors only; binary() draws float operands.
    case OpKind::ShiftLeft:
    case OpKind::ShiftRight:
      return true;
    default:
      return false;
  }
}

std::vector<OpKind> table_ops(std::initializer_list<OpKind> rows) {
  std::vector<OpKind> ops;
  for (OpKind op : rows)
    if (!not_drawn(op)) ops.push_back(op);
  return ops;
}

}  // namespace

const std::vector<OpKind>& unary_ops() {
  static const std::vector<OpKind> ops = table_ops({
#define KILN_UNARY(e, name, ints, glsl) OpKind::e,
#include "kiln/elementwise_ops.def"
#undef KILN_UNARY
  });
  return ops;
}

const std::vector<OpKind>& binary_ops() {
  static const std::vector<OpKind> ops = table_ops({
#define KILN_BINARY(e, name, dtypes, glsl) OpKind::e,
#include "kiln/elementwise_ops.def"
#undef KILN_BINARY
  });
  return ops;
}

void Gen::unary() {
  int a = pick([](const Val& v) { return numeric(v); });
  if (a < 0) return;
  const std::vector<OpKind>& ops = unary_ops();
  OpKind op = r_.pick(ops);
  const bool keeps_int = unary_keeps_ints(op);
  Val v = val(a);
  const bool edge = op == OpKind::Asin || op == OpKind::Acos || op == OpKind::Acosh ||
                    op == OpKind::Atanh || op == OpKind::Floor || op == OpKind::Ceil ||
                    op == OpKind::Round;
  if (edge && !v.exact) return;
  if (op == OpKind::Tan && (v.special || v.bound > 1.2)) return;
  if ((op == OpKind::Sinh || op == OpKind::Cosh) && !v.exact && v.bound > 30) return;
  if (op == OpKind::Exp && !v.exact && v.bound > 30) return;
  if (op == OpKind::Log || op == OpKind::Log1p || op == OpKind::Sqrt || op == OpKind::Rsqrt)
    a = stable(a);
  v = val(a);
  Step s;
  s.kind = StepKind::kUnary;
  s.op = op;
  s.args = {a};
  if (!keeps_int && !floating(v)) {
    v.dtype = DType::kF32;
    v.bound = std::min(v.bound, 1e12);
  }
  switch (op) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Relu:
      break;
    case OpKind::Sign:
      v.bound = 1;
      break;
    case OpKind::Exp:
      v.bound = std::exp(std::min(v.bound, 80.0));
      v.exact = false;
      break;
    case OpKind::Log:
    case OpKind::Log1p:
      v.bound = 90;
      v.exact = false;
      v.special = v.special || !v.pos;
      break;
    case OpKind::Sqrt:
      v.bound = std::sqrt(v.bound) + 1;
      v.exact = false;
      v.special = v.special || !v.pos;
      break;
    case OpKind::Rsqrt:
      v.bound = v.pos ? 2.0 : 1e4;
      v.exact = false;
      v.special = v.special || !v.pos;
      break;
    case OpKind::Tanh:
    case OpKind::Sigmoid:
    case OpKind::Erf:
    case OpKind::Sin:
    case OpKind::Cos:
      v.bound = 1;
      v.exact = false;
      break;
    case OpKind::Tan:
      v.bound = 3;
      v.exact = false;
      break;
    case OpKind::Asin:
    case OpKind::Acos:
    case OpKind::Atan:
      v.special = v.special || (op != OpKind::Atan && v.bound > 1);
      v.bound = 3.2;
      v.exact = false;
      break;
    case OpKind::Sinh:
    case OpKind::Cosh:
      v.bound = std::exp(std::min(v.bound, 80.0));
      v.exact = false;
      break;
    case OpKind::Asinh:
    case OpKind::Acosh:
    case OpKind::Atanh:
      v.special = v.special || op != OpKind::Asinh;
      v.bound = std::log(2 * v.bound + 1) + 10;
      v.exact = false;
      break;
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
      v.bound += 1;
      break;
    default:  // a row without a model here: any value, NaN and inf included
      v.bound += 1;
      v.exact = false;
      v.special = true;
      break;
  }
  if (op != OpKind::Abs && op != OpKind::Relu) v.pos = op == OpKind::Exp && val(a).bound < 1.3;
  if (op != OpKind::Relu && op != OpKind::Abs && op != OpKind::Sign) v.is_index = false;
  if (op == OpKind::Sign && v.is_index) v.is_index = false;
  add_step(s, v);
}

void Gen::binary(bool compare) {
  int a = pick([&](const Val& v) { return compare || numeric(v); });
  if (a < 0) return;
  int b = partner(a, compare && val(a).dtype == DType::kBool);
  if (b < 0) return;
  auto shape = broadcast(val(a).shape, val(b).shape);
  if (!shape) return;
  Step s;
  s.args = {a, b};
  if (compare) {
    if ((val(a).dtype == DType::kBool) != (val(b).dtype == DType::kBool)) return;
    s.kind = StepKind::kCompare;
    s.op = r_.pick(std::vector<OpKind>{OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Le, OpKind::Gt,
                                       OpKind::Ge});
    Val v;
    v.dtype = DType::kBool;
    v.shape = *shape;
    v.bound = 1;
    add_step(s, v);
    return;
  }
  s.kind = StepKind::kBinary;
  s.op = r_.chance(0.2) ? r_.pick(std::vector<OpKind>{OpKind::Add, OpKind::Mul})
                        : r_.pick(binary_ops());
  // Copies: stable() below may add a step, which can move every Val.
  const Val x = val(a);
  const Val y = val(b);
  Val v;
  v.shape = *shape;
  v.dtype = promote_types(x.dtype, y.dtype);
  if (s.op == OpKind::Div && !is_floating(v.dtype)) v.dtype = DType::kF32;
  const bool fp = is_floating(v.dtype);
  v.special = x.special || y.special;
  v.exact = x.exact && y.exact;
  switch (s.op) {
    case OpKind::Add:
    case OpKind::Sub:
      v.bound = x.bound + y.bound;
      if (fp && v.dtype == DType::kF16) v.exact = false;
      break;
    case OpKind::Mul:
      v.bound = x.bound * y.bound;
      if (fp) v.exact = false;
      break;
    case OpKind::Div: {
      int d = stable(b);
      if (d != b) {
        s.args[1] = d;
        b = d;
      }
      v.bound = x.bound * (val(b).pos ? 4.0 : 1e4);
      v.special = v.special || !val(b).pos;
      v.exact = false;
      break;
    }
    case OpKind::Maximum:
    case OpKind::Minimum:
      v.bound = std::max(x.bound, y.bound);
      break;
    case OpKind::Pow:
      if (fp) {
        int base = stable(a);
        if (base != a) {
          s.args[0] = base;
          a = base;
        }
        if (val(a).bound > 10 || val(b).bound > 3) return;
        v.bound = std::pow(std::max(val(a).bound, 1.0), 3.0) * (val(a).pos ? 1.0 : 1e3);
        v.special = true;
        v.exact = false;
      } else {
        v.bound = 9.3e18;
      }
      break;
    default:  // a row without a model here: any value, NaN and inf included
      v.exact = false;
      v.special = true;
      break;
  }
  if (!fp) v.bound = std::min(v.bound, 9.3e18);
  if (!caps_ok(v)) return;
  add_step(s, v);
}

void Gen::binary_scalar() {
  int a = pick([](const Val& v) { return numeric(v); });
  if (a < 0) return;
  Step s;
  s.args = {a};
  Val v = val(a);
  v.is_index = false;
  if (r_.chance(0.35)) {
    s.kind = StepKind::kCompareScalar;
    s.op = r_.pick(std::vector<OpKind>{OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Le, OpKind::Gt,
                                       OpKind::Ge});
    s.scalar = scalar_for(v.dtype, true);
    v.dtype = DType::kBool;
    v.bound = 1;
    v.exact = true;
    v.special = false;
    add_step(s, v);
    return;
  }
  s.kind = StepKind::kBinaryScalar;
  s.op = r_.pick(binary_ops());
  s.flag = r_.chance(0.3);
  double k = scalar_for(v.dtype, false);
  if (!floating(v) && r_.chance(0.2)) k += 0.5;  // a float scalar next to an int tensor: f32
  s.scalar = k;
  const bool int_result = !floating(v) && std::floor(k) == k && s.op != OpKind::Div;
  if (!int_result && !floating(v)) {
    v.dtype = DType::kF32;
    v.bound = std::min(v.bound, 1e12);
  }
  const double ak = std::fabs(k);
  switch (s.op) {
    case OpKind::Add:
    case OpKind::Sub:
      v.bound += ak;
      if (v.dtype == DType::kF16) v.exact = false;
      break;
    case OpKind::Mul:
      v.bound *= std::max(ak, 1.0);
      if (floating(v)) v.exact = false;
      break;
    case OpKind::Div:
      if (s.flag) {  // k / a: a is the divisor
        int d = stable(a);
        s.args[0] = d;
        v.bound = ak * (val(d).pos ? 4.0 : 1e4);
        v.special = v.special || !val(d).pos;
      } else {
        v.bound /= std::max(ak, 1e-3);
        if (k == 0) v.special = true;
      }
      v.exact = false;
      break;
    case OpKind::Maximum:
    case OpKind::Minimum:
      v.bound = std::max(v.bound, ak);
      break;
    case OpKind::Pow:
      if (!int_result) {
        if (s.flag) {  // k ** a
          if (v.bound > 3 || ak > 10) return;
          v.bound = std::pow(std::max(ak, 1.0), 3.0) * 1e3;
        } else {  // a ** k
          int base = stable(a);
          s.args[0] = base;
          if (val(base).bound > 10 || ak > 3) return;
          v.bound = std::pow(std::max(val(base).bound, 1.0), 3.0) * 1e3;
        }
        v.special = true;
        v.exact = false;
      } else {
        v.bound = 9.3e18;
      }
      break;
    default:  // a row without a model here: any value, NaN and inf included
      v.exact = false;
      v.special = true;
      break;
  }
  if (int_result && ak > 1e9) v.bound = 9.3e18;
  if (!floating(v)) v.bound = std::min(v.bound, 9.3e18);
  if (!caps_ok(v)) return;
  v.pos = v.pos && s.op == OpKind::Add && k >= 0;
  add_step(s, v);
}

void Gen::where_op() {
  int a = pick([](const Val&) { return true; });
  if (a < 0) return;
  int c = bool_operand(val(a).shape);
  if (c < 0) return;
  int b = partner(a, true);
  if (b < 0) return;
  if ((val(a).dtype == DType::kBool) != (val(b).dtype == DType::kBool)) return;
  auto s1 = broadcast(val(a).shape, val(b).shape);
  if (!s1) return;
  auto shape = broadcast(*s1, val(c).shape);
  if (!shape) return;
  Step s;
  s.kind = StepKind::kWhere;
  s.args = {c, a, b};
  Val v;
  v.shape = *shape;
  v.dtype = promote_types(val(a).dtype, val(b).dtype);
  v.bound = std::max(val(a).bound, val(b).bound);
  v.exact = val(a).exact && val(b).exact;
  v.special = val(a).special || val(b).special;
  v.pos = val(a).pos && val(b).pos;
  add_step(s, v);
}

void Gen::masked_fill_op() {
  int a = pick([](const Val& v) { return numeric(v); });
  if (a < 0) return;
  int m = bool_operand(val(a).shape);
  if (m < 0) return;
  auto shape = broadcast(val(a).shape, val(m).shape);
  if (!shape) return;
  Step s;
  s.kind = StepKind::kMaskedFill;
  s.args = {a, m};
  Val v = val(a);
  s.scalar = floating(v)
                 ? (r_.chance(0.4) ? -std::numeric_limits<double>::infinity() : float_scalar(true))
                 : int_scalar();
  v.shape = *shape;
  v.is_index = false;
  v.pos = false;
  if (std::isfinite(s.scalar))
    v.bound = std::max(v.bound, std::fabs(s.scalar));
  else
    v.special = true;
  if (!floating(v) && std::fabs(s.scalar) > 1e9) v.bound = 9.3e18;
  add_step(s, v);
}

void Gen::cast_op() {
  int a = pick([](const Val&) { return true; });
  if (a < 0) return;
  Val v = val(a);
  DType to;
  do to = rand_dtype();
  while (to == v.dtype);
  if (floating(v) && !is_floating(to) && !v.exact) return;  // truncation of inexact values
  if (floating(v) && to == DType::kF16 && !v.exact && v.bound > 6e4) return;
  Step s;
  s.kind = StepKind::kCast;
  s.args = {a};
  s.dtype = to;
  v.dtype = to;
  if (to == DType::kBool) {
    v.bound = 1;
    v.special = false;
    v.is_index = false;
  } else if (to == DType::kF16) {
    if (v.bound > 6e4) v.special = true;
    v.bound = std::min(v.bound, 65504.0);
  } else if (to == DType::kI32) {
    v.bound = std::min(v.bound, 2147483648.0);
    v.special = false;
  } else if (!is_floating(to)) {
    v.special = false;
  }
  if (is_floating(to)) v.is_index = false;
  if (!is_floating(to) && is_floating(val(a).dtype)) v.is_index = false;
  v.pos = v.pos && is_floating(to);
  add_step(s, v);
}

void Gen::reduce_op() {
  int a = pick([](const Val& v) { return !v.shape.empty(); });
  if (a < 0) return;
  Val v = val(a);
  OpKind op = r_.pick(
      std::vector<OpKind>{OpKind::Sum, OpKind::Sum, OpKind::Mean, OpKind::Max, OpKind::Min});
  if (op == OpKind::Mean && !floating(v)) op = OpKind::Sum;
  if ((op == OpKind::Sum || op == OpKind::Mean) && v.huge) return;
  std::vector<int64_t> axes = rand_axes(static_cast<int>(v.shape.size()));
  int64_t count = 1;
  bool may_be_empty = false;  // a mean over no elements is NaN
  for (int64_t d : axes) {
    const GDim& g = v.shape[static_cast<size_t>(d)];
    may_be_empty = may_be_empty || lo(g) == 0;
    if ((op == OpKind::Max || op == OpKind::Min) && lo(g) < 1) return;
    count *= std::max<int64_t>(hi(g), 1);
  }
  Step s;
  s.kind = StepKind::kReduce;
  s.op = op;
  s.flag = r_.chance(0.4);
  GShape out;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    bool red = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (!red)
      out.push_back(v.shape[d]);
    else if (s.flag)
      out.push_back(GDim{1, 0});
  }
  if (r_.chance(0.2)) {  // negative axes count from the end
    for (int64_t& d : axes) d -= static_cast<int64_t>(v.shape.size());
    std::sort(axes.begin(), axes.end());
  }
  s.ints = axes;
  s.args = {a};
  v.shape = out;
  if (op == OpKind::Sum) {
    if (v.dtype == DType::kBool) v.dtype = DType::kI64;
    v.bound *= static_cast<double>(count);
    if (floating(v)) v.exact = false;
    v.is_index = false;
    v.pos = false;
  } else if (op == OpKind::Mean) {
    v.exact = false;
    v.special = v.special || may_be_empty;
  }
  if (!floating(v)) v.bound = std::min(v.bound, 9.3e18);
  if (!caps_ok(v)) return;
  add_step(s, v);
}

void Gen::arg_reduce() {
  int a = pick([](const Val& v) { return !v.shape.empty() && numeric(v); });
  if (a < 0) return;
  const Val& x = val(a);
  const int64_t axis = r_.range(0, static_cast<int64_t>(x.shape.size()) - 1);
  const GDim d = x.shape[static_cast<size_t>(axis)];
  if (lo(d) < 1) return;
  Step s;
  s.kind = StepKind::kArgReduce;
  s.args = {a};
  s.flag = r_.chance(0.5);
  s.flag2 = r_.chance(0.5);
  s.ints = {r_.chance(0.3) ? axis - static_cast<int64_t>(x.shape.size()) : axis};
  Val v;
  v.dtype = DType::kI64;
  v.shape = x.shape;
  if (s.flag)
    v.shape[static_cast<size_t>(axis)] = GDim{1, 0};
  else
    v.shape.erase(v.shape.begin() + axis);
  v.bound = static_cast<double>(hi(d));
  v.is_index = true;
  v.index_bound = d;
  add_step(s, v);
}

}  // namespace kiln::fuzz::gen

namespace kiln::fuzz {

Program generate(uint64_t seed, uint64_t index, const GenOptions& options) {
  return gen::Gen(seed, index, options).run();
}

}  // namespace kiln::fuzz
